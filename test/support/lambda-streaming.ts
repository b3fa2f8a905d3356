/**
 * What Lambda's Node.js runtime gives a streaming function, for running a bundle in a fresh
 * Node process: the global `awslambda`. `HttpResponseStream.from` writes what the runtime
 * writes — the status and headers as JSON, then eight NUL bytes — before the body.
 * `streamifyResponse` returns the handler as it is; the script below calls it as the runtime
 * would, with the event, a response stream and a context.
 */
export const STREAMING_RUNTIME = `
globalThis.awslambda = {
  streamifyResponse: (handler) => handler,
  HttpResponseStream: {
    from(stream, prelude) {
      stream.write(JSON.stringify(prelude));
      stream.write(new Uint8Array(8));
      return stream;
    },
  },
};
`;

/**
 * A script that imports the bundle in argv[1] as Lambda would and answers each event of
 * argv[2] in turn, printing every chunk as `CHUNK <event index> <base64>` the moment it is
 * written and `DONE <event index>` when the handler resolves. A line on stdin is the client
 * going away: the current response stream is destroyed.
 */
export const STREAMING_INVOKER = `${STREAMING_RUNTIME}
const { PassThrough } = await import("node:stream");
const { handler } = await import(process.argv[1]);
const events = JSON.parse(process.argv[2]);
let current;
process.stdin.on("data", () => current?.destroy());
for (const [index, event] of events.entries()) {
  const stream = new PassThrough();
  current = stream;
  stream.on("data", (chunk) => process.stdout.write("\\nCHUNK " + index + " " + chunk.toString("base64") + "\\n"));
  await handler(event, stream, {});
  process.stdout.write("\\nDONE " + index + "\\n");
}
process.exit(0);
`;

const DELIMITER = Buffer.alloc(8);

/** One streamed response as the client would see it: the prelude, and the body so far. */
export interface StreamedResponse {
  statusCode?: number;
  headers: Record<string, string>;
  body: string;
  done: boolean;
}

/** Reads the invoker's output: each event's prelude and body, as they arrive. */
export class StreamedResponses {
  readonly #raw = new Map<number, Buffer>();
  readonly #done = new Set<number>();
  #pending = "";

  feed(text: string): void {
    const lines = (this.#pending + text).split("\n");
    this.#pending = lines.pop() ?? "";
    for (const line of lines) {
      const [kind, index, data] = line.split(" ");
      if (kind === "CHUNK") {
        const before = this.#raw.get(Number(index)) ?? Buffer.alloc(0);
        this.#raw.set(Number(index), Buffer.concat([before, Buffer.from(data ?? "", "base64")]));
      } else if (kind === "DONE") this.#done.add(Number(index));
    }
  }

  response(index: number): StreamedResponse {
    const raw = this.#raw.get(index) ?? Buffer.alloc(0);
    const split = raw.indexOf(DELIMITER);
    if (split < 0) return { headers: {}, body: "", done: this.#done.has(index) };
    const prelude = JSON.parse(raw.subarray(0, split).toString("utf8"));
    return {
      statusCode: prelude.statusCode,
      headers: prelude.headers,
      body: raw.subarray(split + DELIMITER.length).toString("utf8"),
      done: this.#done.has(index),
    };
  }
}
