import { appendFileSync, existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import type { EventEnvelope } from "./envelope";

/** An accepted event on its way to its targets, as the journal keeps it. */
export interface JournaledEvent {
  busName: string;
  envelope: EventEnvelope;
}

/** Done lines written before the file is rewritten with only what is still under way. */
const COMPACT_AFTER = 10_000;

/**
 * The local bus's memory of what it accepted but has not delivered yet, in a file: EventBridge
 * keeps an event once PutEvents accepts it, and so must the bus on one machine when its
 * process is killed outright. One line per accepted event and one when all its deliveries
 * ended; appended synchronously, so a line is in the file (the kernel's, at least) before
 * PutEvents answers. On start, what has no end line is delivered again: at least once.
 */
export class BusJournal {
  readonly #file: string;
  readonly #open = new Map<string, JournaledEvent>();
  #done = 0;

  constructor(file: string) {
    this.#file = file;
  }

  /** The events a previous process accepted and never finished; the file then starts afresh. */
  takeUnfinished(): JournaledEvent[] {
    const unfinished = new Map<string, JournaledEvent>();
    if (existsSync(this.#file)) {
      for (const line of readFileSync(this.#file, "utf8").split("\n")) {
        if (!line) continue;
        let record: { put?: JournaledEvent; done?: string };
        try {
          record = JSON.parse(line);
        } catch {
          continue; // A line cut off by the kill: its PutEvents never answered.
        }
        if (record.put) unfinished.set(record.put.envelope.id, record.put);
        else if (record.done) unfinished.delete(record.done);
      }
    }
    writeFileSync(this.#file, "");
    return [...unfinished.values()];
  }

  accepted(event: JournaledEvent): void {
    this.#open.set(event.envelope.id, event);
    appendFileSync(this.#file, `${JSON.stringify({ put: event })}\n`);
  }

  finished(eventId: string): void {
    if (!this.#open.delete(eventId)) return;
    appendFileSync(this.#file, `${JSON.stringify({ done: eventId })}\n`);
    if (++this.#done >= COMPACT_AFTER) this.#compact();
  }

  #compact(): void {
    this.#done = 0;
    const lines = [...this.#open.values()].map((put) => `${JSON.stringify({ put })}\n`);
    writeFileSync(`${this.#file}.tmp`, lines.join(""));
    renameSync(`${this.#file}.tmp`, this.#file);
  }
}
