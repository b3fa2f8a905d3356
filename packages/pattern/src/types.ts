/** Shapes shared by the compiler's modules. */

/** A compiled (part of a) pattern applied to whatever the event holds at its position. */
export type Matcher = (value: unknown) => boolean;

/** A JSON leaf value in an event. */
export type Scalar = string | number | boolean | null;

export type ScalarTest = (value: Scalar) => boolean;

/** Counts compiled elements so one pattern cannot grow without bound (see compile.ts). */
export interface Budget {
  use(count: number, path: string): void;
}
