import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";

/** An event a target never accepted: kept for inspection, never silently dropped. */
export interface DeadLetter {
  /** Names the dead letter for ListDeadLetters and RedriveDeadLetters. */
  id: string;
  eventId: string;
  busName: string;
  ruleName: string;
  targetId: string;
  targetArn: string;
  deadLetterArn?: string;
  attempts: number;
  error: string;
  input: unknown;
  failedAt: string;
}

/**
 * The events no target accepted, kept until someone redrives them: EventBridge sends them to
 * the target's dead-letter queue, and locally they stay here, in a file when the bus has a
 * data directory so a restart keeps them too. The file is rewritten whole on each change:
 * dead letters are few, and a rename is atomic.
 */
export class DeadLetterStore {
  readonly #letters = new Map<string, DeadLetter>();
  /** Letters kept in memory only: deliveries a closing bus cut short, which its journal replays. */
  readonly #transient = new Set<string>();

  constructor(private readonly file?: string) {
    if (file && existsSync(file)) {
      const kept = JSON.parse(readFileSync(file, "utf8")) as DeadLetter[];
      for (const letter of kept) this.#letters.set(letter.id, letter);
    }
  }

  list(): DeadLetter[] {
    return [...this.#letters.values()];
  }

  get(id: string): DeadLetter | undefined {
    return this.#letters.get(id);
  }

  /** Adds a dead letter, or replaces the one it is a redrive of. */
  put(letter: DeadLetter, options: { transient?: boolean } = {}): void {
    this.#letters.set(letter.id, letter);
    if (options.transient) this.#transient.add(letter.id);
    else this.#save();
  }

  remove(id: string): void {
    this.#transient.delete(id);
    if (this.#letters.delete(id)) this.#save();
  }

  #save(): void {
    if (!this.file) return;
    const kept = this.list().filter((letter) => !this.#transient.has(letter.id));
    writeFileSync(`${this.file}.tmp`, JSON.stringify(kept));
    renameSync(`${this.file}.tmp`, this.file);
  }
}
