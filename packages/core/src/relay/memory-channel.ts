import { randomUUID } from "node:crypto";
import {
  type AttachedCaller,
  accepts,
  NO_SUCH_METHOD,
  type RelayAnswer,
  type RelayEvent,
  type RelayRequest,
  wants,
} from "@toolbus/wire/model/relay";
import { ConflictError } from "../errors";
import type { CallChannel, CallerAttachment, CallKey } from "../ports";
import { refusal } from "./refusal";

interface Waiting {
  request: RelayRequest;
  principalId: string;
  settle(answer: RelayAnswer): void;
}

interface Line {
  caller?: AttachedCaller;
  waiting: Map<string, Waiting>;
  readers: Set<(event: RelayEvent) => void>;
  /** When a caller last let go of it without leaving for good (ms). */
  awaySince?: number;
}

/**
 * A caller that stepped away between 2026-07-28 rounds and never came back, with nothing
 * waiting for it, is forgotten after this long: the call it waited for has long ended.
 */
const AWAY_MS = 15 * 60_000;

/**
 * The relay where the calls a caller waits for run in the caller's own process (`npm start`,
 * tests): nothing is stored, and a line lives only while a caller or a request holds it.
 */
export function memoryCallChannel(): CallChannel {
  const lines = new Map<string, Line>();
  const keyOf = (key: CallKey) => `${key.parentRunId}\n${key.callId}`;
  const lineOf = (key: CallKey) => {
    let line = lines.get(keyOf(key));
    if (!line) {
      line = { waiting: new Map(), readers: new Set() };
      lines.set(keyOf(key), line);
    }
    return line;
  };
  const forgetIfIdle = (key: CallKey, line: Line) => {
    if (!line.caller && line.waiting.size === 0 && line.readers.size === 0) {
      lines.delete(keyOf(key));
    }
  };

  const forgetAbandoned = () => {
    const now = Date.now();
    for (const [name, line] of lines) {
      const away = line.awaySince !== undefined && now - line.awaySince > AWAY_MS;
      if (away && line.waiting.size === 0 && line.readers.size === 0) lines.delete(name);
    }
  };

  return {
    async attach(key, caller): Promise<CallerAttachment> {
      forgetAbandoned();
      const line = lineOf(key);
      // A call's relay is its own caller's: another key's attachment stays.
      if (line.caller && line.caller.principalId !== caller.principalId) {
        throw new ConflictError("Another key waits for this call.");
      }
      line.caller = caller;
      delete line.awaySince;
      const queue: RelayEvent[] = [...line.waiting.values()].map(({ request }) => ({
        type: "request",
        request,
      }));
      let wake: (() => void) | undefined;
      const reader = (event: RelayEvent) => {
        queue.push(event);
        wake?.();
      };
      line.readers.add(reader);
      let closed = false;
      return {
        async *events(signal) {
          const onAbort = () => wake?.();
          signal.addEventListener("abort", onAbort, { once: true });
          try {
            while (!closed) {
              const next = queue.shift();
              if (next) {
                // A request answered or given up on since it was queued no longer waits.
                if (next.type === "request" && !line.waiting.has(next.request.id)) continue;
                yield next;
                continue;
              }
              // Stopped: what had arrived is out, nothing more will be.
              if (signal.aborted) break;
              await new Promise<void>((resolve) => {
                wake = resolve;
              });
              wake = undefined;
            }
          } finally {
            signal.removeEventListener("abort", onAbort);
          }
        },
        async close({ gone }) {
          closed = true;
          wake?.();
          line.readers.delete(reader);
          if (!gone && line.caller === caller) line.awaySince = Date.now();
          if (gone && line.caller === caller) {
            line.caller = undefined;
            for (const waiting of line.waiting.values()) {
              waiting.settle(refusal("The caller stopped waiting for this call."));
            }
            line.waiting.clear();
          }
          forgetIfIdle(key, line);
        },
      };
    },

    async answer(key, requestId, principalId, answer) {
      const line = lines.get(keyOf(key));
      const waiting = line?.waiting.get(requestId);
      if (!line || !waiting || waiting.principalId !== principalId) return false;
      line.waiting.delete(requestId);
      waiting.settle(answer);
      forgetIfIdle(key, line);
      return true;
    },

    async caller(key) {
      return lines.get(keyOf(key))?.caller;
    },

    async notify(key, notification) {
      const line = lines.get(keyOf(key));
      if (!line || !wants(line.caller, notification)) return;
      for (const reader of line.readers) reader({ type: "notification", notification });
    },

    ask(key, asked, signal) {
      const line = lines.get(keyOf(key));
      const caller = line?.caller;
      if (!line || !caller || !accepts(caller, asked.method)) {
        return Promise.resolve(
          refusal(`The caller of this call does not take ${asked.method}.`, NO_SUCH_METHOD),
        );
      }
      if (signal.aborted) return Promise.reject(signal.reason);
      const request: RelayRequest = { ...asked, id: randomUUID() };
      return new Promise<RelayAnswer>((resolve, reject) => {
        const onAbort = () => {
          line.waiting.delete(request.id);
          forgetIfIdle(key, line);
          reject(signal.reason);
        };
        signal.addEventListener("abort", onAbort, { once: true });
        line.waiting.set(request.id, {
          request,
          principalId: caller.principalId,
          settle: (answer) => {
            signal.removeEventListener("abort", onAbort);
            resolve(answer);
          },
        });
        for (const reader of line.readers) reader({ type: "request", request });
      });
    },
  };
}
