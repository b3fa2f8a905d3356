import { LocalRuntimeError } from "../errors";

/**
 * An error the local bus answers with, shaped as EventBridge's JSON 1.1 protocol shapes it:
 * the SDK reads `__type` and turns it into its own exception class (ResourceNotFoundException,
 * ValidationException, ...), so callers handle local and AWS failures with the same code.
 */
export class EventBridgeApiError extends LocalRuntimeError {
  override name = "EventBridgeApiError";

  constructor(
    readonly type: string,
    message: string,
    readonly statusCode = 400,
  ) {
    super(message, { context: { type } });
  }
}

export const notFound = (message: string) =>
  new EventBridgeApiError("ResourceNotFoundException", message);

export const validation = (message: string) =>
  new EventBridgeApiError("ValidationException", message);

export const limitExceeded = (message: string) =>
  new EventBridgeApiError("LimitExceededException", message);

export const alreadyExists = (message: string) =>
  new EventBridgeApiError("ResourceAlreadyExistsException", message);
