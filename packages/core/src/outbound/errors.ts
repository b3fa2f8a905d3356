import { ToolbusError } from "../errors";
import type { OutboundErrorKind } from "./types";

/** An outbound request that produced no HTTP answer the caller can use. */
export class OutboundError extends ToolbusError {
  override name = "OutboundError";
  override readonly code = "outbound_failed";
  override readonly status = 502;

  constructor(
    readonly kind: OutboundErrorKind,
    message: string,
    options: { cause?: unknown; context?: Record<string, unknown> } = {},
  ) {
    super(message, options);
  }
}
