/** One server-sent event as a reader sees it. */
export interface Frame {
  event?: string;
  id?: string;
  data: string;
}

/** Reads an event stream incrementally: frames and comments as they arrive. */
export class SseReader {
  readonly frames: Frame[] = [];
  readonly comments: string[] = [];
  done = false;
  private buffer = "";
  private readonly decoder = new TextDecoder();
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;

  constructor(response: Response) {
    this.reader = (response.body as ReadableStream<Uint8Array>).getReader();
  }

  /** Reads until `ready()` holds or the stream ends; fails after `timeoutMs`. */
  async until(ready: () => boolean, timeoutMs = 5_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!ready() && !this.done) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out; frames so far: ${JSON.stringify(this.frames)}`);
      const chunk = await Promise.race([
        this.reader.read(),
        new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), left)),
      ]);
      if (chunk === "timeout") continue;
      if (chunk.done) this.done = true;
      else this.push(this.decoder.decode(chunk.value, { stream: true }));
    }
  }

  cancel(): Promise<void> {
    return this.reader.cancel().catch(() => undefined);
  }

  private push(text: string) {
    this.buffer += text;
    let end = this.buffer.indexOf("\n\n");
    while (end >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const frame: Frame = { data: "" };
      let isFrame = false;
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) this.comments.push(line.slice(1).trim());
        else {
          const [field, ...rest] = line.split(": ");
          const value = rest.join(": ");
          if (field === "event") frame.event = value;
          if (field === "id") frame.id = value;
          if (field === "data") frame.data += value;
          isFrame = true;
        }
      }
      if (isFrame) this.frames.push(frame);
      end = this.buffer.indexOf("\n\n");
    }
  }
}
