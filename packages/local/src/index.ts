// The one-machine runtime. Heavy parts have their own entry points (`@toolbus/local/bus`,
// `@toolbus/local/dynamodb`) so importers load only what they use; the event-pattern matcher is
// its own package (`@toolbus/pattern`), where a Lambda can use it too.
export { LocalRuntimeError } from "./errors";
export { localAdminKey } from "./runtime/admin-key";
export { type ApiServer, serveApi } from "./runtime/api-server";
export { type ComposeOptions, composeLocalToolbus } from "./runtime/compose";
export { type LocalSystem, type LocalSystemOptions, startLocalSystem } from "./runtime/system";
export { applySchedules, applyWiring, localFunctionName } from "./runtime/wiring";
