// The one-machine runtime. Heavy parts have their own entry points (`@toolbus/local/bus`,
// `@toolbus/local/dynamodb`, `@toolbus/local/pattern`) so importers load only what they use.
export { LocalRuntimeError } from "./errors";
export { localAdminKey } from "./runtime/admin-key";
export { type ApiServer, serveApi } from "./runtime/api-server";
export { type ComposeOptions, composeLocalToolbus } from "./runtime/compose";
export { type LocalSystem, type LocalSystemOptions, startLocalSystem } from "./runtime/system";
export { applySchedules, applyWiring, localFunctionName } from "./runtime/wiring";
