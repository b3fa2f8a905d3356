/** One dispatched message of a `text/event-stream`. */
export interface SseMessage {
  /** The `event:` field, or "message" when none was given. */
  event: string;
  /**
   * The `data:` lines joined by newlines. Absent when the block had none: such a block is no
   * event (the spec does not dispatch it), only its `id` and `retry` count.
   */
  data?: string;
  /** The `id:` field when this message carried one (not the stream's last id). */
  id?: string;
  /** The `retry:` field, in milliseconds, when this message carried one. */
  retry?: number;
}

/**
 * An incremental parser for the event stream format (WHATWG HTML, "server-sent events"):
 * lines end with CRLF, LF or CR, `:` starts a comment, a blank line dispatches. A block
 * without data is no event; it comes back without `data` only so its `id` / `retry` count.
 * Feed it decoded text in chunks of any size.
 */
export class SseParser {
  #buffer = "";
  #data: string[] = [];
  #event = "";
  #id: string | undefined;
  #retry: number | undefined;
  /** Comments seen (keep-alives), for callers that care. */
  comments = 0;

  /** Parses a chunk; returns the messages it completed. */
  push(chunk: string): SseMessage[] {
    this.#buffer += chunk;
    const messages: SseMessage[] = [];
    for (;;) {
      const end = this.#buffer.search(/\r\n|\r|\n/);
      if (end < 0) break;
      // A CR at the very end may be the first half of a CRLF split across chunks.
      if (this.#buffer[end] === "\r" && end === this.#buffer.length - 1) break;
      const line = this.#buffer.slice(0, end);
      this.#buffer = this.#buffer.slice(end + (this.#buffer.startsWith("\r\n", end) ? 2 : 1));
      const message = this.#line(line);
      if (message) messages.push(message);
    }
    return messages;
  }

  /** Ends the stream: a message not followed by a blank line is discarded, as the spec says. */
  end(): SseMessage[] {
    const rest = this.#buffer.endsWith("\r") ? this.push("\n") : [];
    this.#buffer = "";
    this.#reset();
    return rest;
  }

  #line(line: string): SseMessage | undefined {
    if (line === "") return this.#dispatch();
    if (line.startsWith(":")) {
      this.comments++;
      return undefined;
    }
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "event":
        this.#event = value;
        break;
      case "data":
        this.#data.push(value);
        break;
      case "id":
        if (!value.includes("\0")) this.#id = value;
        break;
      case "retry":
        if (/^\d+$/.test(value)) this.#retry = Number(value);
        break;
      default:
        // Unknown fields are ignored.
        break;
    }
    return undefined;
  }

  #dispatch(): SseMessage | undefined {
    const message: SseMessage | undefined =
      this.#data.length === 0 && this.#id === undefined && this.#retry === undefined
        ? undefined
        : {
            event: this.#event || "message",
            ...(this.#data.length > 0 ? { data: this.#data.join("\n") } : {}),
            ...(this.#id !== undefined ? { id: this.#id } : {}),
            ...(this.#retry !== undefined ? { retry: this.#retry } : {}),
          };
    this.#reset();
    return message;
  }

  #reset() {
    this.#data = [];
    this.#event = "";
    this.#id = undefined;
    this.#retry = undefined;
  }
}
