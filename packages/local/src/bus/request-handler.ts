import { answerJsonRequest } from "./protocol";
import type { LocalEventBus } from "./service";

interface SdkHttpRequest {
  headers: Record<string, string>;
  body?: unknown;
}

/**
 * An SDK request handler that answers from a LocalEventBus in this process, with no socket:
 * `new EventBridgeClient({ requestHandler: inProcessRequestHandler(bus), ... })`. The request
 * still goes through the SDK's serializers, signers and error parsing, exactly as over HTTP.
 */
export function inProcessRequestHandler(bus: LocalEventBus) {
  return {
    async handle(request: SdkHttpRequest) {
      // A network hop always yields to the event loop; so does this, or a caller sending in a
      // tight loop would starve the bus's deliveries until it stopped.
      await new Promise((resolve) => setImmediate(resolve));
      const target = Object.entries(request.headers).find(
        ([name]) => name.toLowerCase() === "x-amz-target",
      )?.[1];
      const answer = await answerJsonRequest(bus, target, bodyText(request.body));
      return {
        response: {
          statusCode: answer.statusCode,
          headers: answer.headers,
          body: new TextEncoder().encode(answer.body),
        },
      };
    },
    updateHttpClientConfig(): void {},
    httpHandlerConfigs() {
      return {};
    },
    destroy(): void {},
  };
}

function bodyText(body: unknown): string {
  if (body === undefined || body === null) return "";
  if (typeof body === "string") return body;
  if (body instanceof Uint8Array) return new TextDecoder().decode(body);
  throw new TypeError("The in-process handler accepts string or byte request bodies only.");
}
