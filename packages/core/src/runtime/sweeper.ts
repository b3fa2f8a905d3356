import { type SweepDeps, sweep } from "../app/calls/lifecycle";

/** The sweeper's entry: the call lifecycle's `sweep`, with its dependencies built on first use. */
export function createSweeper(deps: () => SweepDeps | Promise<SweepDeps>) {
  return async (): Promise<{ swept: number; announced: number }> => sweep(await deps());
}
