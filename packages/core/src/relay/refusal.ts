import type { RelayAnswer } from "@toolbus/wire/model/relay";

/** JSON-RPC's "internal error": what a server is told when its request could not be put. */
const NOT_RELAYED = -32603;

/** The answer a server gets when its request cannot reach a caller, in JSON-RPC's terms. */
export function refusal(message: string, code = NOT_RELAYED): RelayAnswer {
  return { error: { code, message } };
}
