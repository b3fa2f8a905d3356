import {
  InvokeCommand,
  type InvokeCommandOutput,
  LambdaClient,
  type LambdaClientConfig,
} from "@aws-sdk/client-lambda";
import { type CallRecord, callRecord } from "@toolbus/wire/model/call";
import * as z from "zod";
import { type Dispatcher, DispatchNotStartedError } from "../app/calls/dispatch";
import { ToolbusError, ValidationError } from "../errors";
import { SDK_CLIENT_OPTIONS } from "../sdk-options";
import { REGISTERED_KINDS, registeredHandlerId } from "../wiring";

/**
 * The environment variable that names, as a JSON object, the Lambda function of each handler
 * the API may dispatch to: `{"tools/web_search": "<function name>", "registered/http": ...}` (the former
 * `external/http` ids are read as the current ones).
 * The stack sets it on the API function only; locally it is absent.
 */
export const FUNCTIONS_ENV = "TOOLBUS_FUNCTIONS";

export interface LambdaDispatcherOptions {
  /** Must be built with `maxAttempts: 1` (see `lambdaClient`). */
  client: LambdaClient;
  /** Function name (or ARN) by wiring-table handler id. */
  functions: Readonly<Record<string, string>>;
}

/**
 * On AWS: runs a call a caller waits for by invoking its handler's function synchronously
 * (Lambda Invoke, RequestResponse), so each tool runs in its own function with its own
 * secrets and permissions. The response is the finished call the handler resolved with.
 *
 * Giving up the wait (`signal`) aborts the HTTP request only: on AWS the function keeps
 * running and stores its result, which the caller can follow at the call's status URL.
 */
export function lambdaDispatcher({ client, functions }: LambdaDispatcherOptions): Dispatcher {
  return {
    async dispatch(handlerId, event, signal) {
      const name = Object.hasOwn(functions, handlerId) ? functions[handlerId] : undefined;
      if (!name) {
        throw new DispatchNotStartedError(`No function is known for handler ${handlerId}.`, {
          context: { handler: handlerId },
        });
      }
      const context = { handler: handlerId, function: name };
      if (signal.aborted) {
        throw new DispatchNotStartedError(`Gave up before invoking ${handlerId}.`, { context });
      }
      let response: InvokeCommandOutput;
      try {
        response = await client.send(
          new InvokeCommand({
            FunctionName: name,
            InvocationType: "RequestResponse",
            Payload: new TextEncoder().encode(JSON.stringify(event)),
          }),
          { abortSignal: signal },
        );
      } catch (error) {
        if (certainlyNotStarted(error)) {
          throw new DispatchNotStartedError(
            `Lambda did not start ${handlerId}: ${describe(error)}`,
            { cause: error, context },
          );
        }
        throw new ToolbusError(
          `Invoking ${handlerId} failed; it may have run: ${describe(error)}`,
          { cause: error, context },
        );
      }
      const payload = decode(response.Payload);
      if (response.FunctionError) {
        // The handler threw (or its function timed out or crashed) after Lambda started it.
        const failure = parseJson(payload) as { errorType?: unknown; errorMessage?: unknown };
        const what = [failure?.errorType, failure?.errorMessage ?? payload].filter(Boolean);
        throw new ToolbusError(
          `Handler ${handlerId} failed (${response.FunctionError}): ${what.map(String).join(": ")}`,
          { context: { ...context, functionError: response.FunctionError } },
        );
      }
      return parseCall(payload, handlerId, context);
    },
  };
}

/**
 * A Lambda client for dispatching. `maxAttempts: 1`: the SDK must never retry an Invoke on
 * its own. A retried Invoke after a timeout, a reset or a 5xx could run a tool twice (the
 * first attempt may well be running), and one retried after a throttle is the bus's job: the
 * call service hands a call that did not start to the bus instead.
 *
 * No socket timeout: a synchronous Invoke sends nothing back until the handler returns, and
 * how long to wait is the caller's `signal` to decide.
 */
export function lambdaClient(
  config: Omit<LambdaClientConfig, "maxAttempts" | "retryStrategy" | "requestHandler"> = {},
): LambdaClient {
  return new LambdaClient({
    ...SDK_CLIENT_OPTIONS,
    ...config,
    maxAttempts: 1,
    requestHandler: { socketTimeout: 0 },
  });
}

const TOOL_HANDLER = /^tools\/[a-z][a-z0-9_]{0,47}$/;
const REGISTERED_HANDLERS: ReadonlySet<string> = new Set(REGISTERED_KINDS.map(registeredHandlerId));

/**
 * The ids registered tools' handlers had before "registered" was their one name
 * (`external/http`): a function map written with them, by a deploy or by hand, still works.
 * Kept here, its only reader, so no tool's bundle carries it.
 */
const FORMER_HANDLER_IDS: Readonly<Record<string, string>> = Object.fromEntries(
  REGISTERED_KINDS.map((kind) => [`external/${kind}`, registeredHandlerId(kind)]),
);

/** A handler id as the wiring table names it today, whichever name it was given. */
const currentHandlerId = (id: string): string =>
  Object.hasOwn(FORMER_HANDLER_IDS, id) ? (FORMER_HANDLER_IDS[id] as string) : id;

/** A function name, or its ARN (unqualified: the dispatcher always runs the latest code). */
const functionName = z
  .string()
  .regex(
    /^([A-Za-z0-9_-]{1,64}|arn:aws[a-z-]*:lambda:[a-z0-9-]+:\d{12}:function:[A-Za-z0-9_-]{1,64})$/,
  );

/** Every entry is checked, keys and values alike, so one error message names every bad one. */
const functionMap = z
  .record(z.string(), z.unknown())
  .superRefine((functions, ctx) => {
    const entries = Object.entries(functions);
    if (entries.length === 0) ctx.addIssue({ code: "custom", message: "names no function" });
    for (const [handler, name] of entries) {
      if (!TOOL_HANDLER.test(handler) && !REGISTERED_HANDLERS.has(currentHandlerId(handler))) {
        ctx.addIssue({
          code: "custom",
          path: [handler],
          message:
            "is not a handler the API dispatches to (tools/<id>, registered/http, registered/mcp)",
        });
      }
      if (!functionName.safeParse(name).success) {
        ctx.addIssue({
          code: "custom",
          path: [handler],
          message: `must be a Lambda function name or unqualified function ARN, not ${JSON.stringify(name)}`,
        });
      }
    }
  })
  .transform((functions) => {
    // Former ids name the same handler; where both are given, the current one wins.
    const current: Record<string, string> = {};
    for (const [handler, name] of Object.entries(functions as Record<string, string>)) {
      const id = currentHandlerId(handler);
      if (id === handler || !Object.hasOwn(functions, id)) current[id] = name;
    }
    return current;
  });

/**
 * The Lambda dispatcher this function's environment asks for: `TOOLBUS_FUNCTIONS` (see
 * FUNCTIONS_ENV), or undefined when it is not set (`npm start`, tests: the in-process
 * default). A variable that is set but malformed is an error, never a silent fallback to
 * running tools in the API's own process.
 */
export function lambdaDispatcherFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  client: () => LambdaClient = () => lambdaClient(),
): Dispatcher | undefined {
  const raw = env[FUNCTIONS_ENV];
  if (raw === undefined) return undefined;
  return lambdaDispatcher({ client: client(), functions: parseFunctions(raw) });
}

/** Parses FUNCTIONS_ENV's value: a JSON object of handler id -> function name. */
export function parseFunctions(raw: string): Record<string, string> {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (error) {
    throw new ValidationError(
      `${FUNCTIONS_ENV} is not valid JSON: ${(error as Error).message}. Expected an object of handler id -> Lambda function name.`,
    );
  }
  const parsed = functionMap.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => {
      const at = issue.path.map(String).join(".");
      return at ? `"${at}" ${issue.message}` : issue.message;
    });
    throw new ValidationError(
      `${FUNCTIONS_ENV} is not a map of handler id -> Lambda function name: ${issues.join("; ")}.`,
      { details: issues },
    );
  }
  return parsed.data;
}

/**
 * Errors Lambda (or the SDK) raises before the handler runs: the invocation was refused,
 * throttled, or its execution environment could not be set up. Everything else, a 5xx
 * ServiceException, a timeout or a reset connection included, may come after the handler
 * started. EFSIOException is left out on purpose: it happens while the function runs.
 */
const NOT_STARTED: ReadonlySet<string> = new Set([
  // Throttled or over a quota (HTTP 429 and kin).
  "TooManyRequestsException",
  "ServiceQuotaExceededException",
  // The function is missing, not ready, or being updated.
  "ResourceNotFoundException",
  "ResourceNotReadyException",
  "ResourceConflictException",
  // The invocation itself was refused.
  "InvalidParameterValueException",
  "InvalidRequestContentException",
  "RequestTooLargeException",
  "SerializedRequestEntityTooLargeException",
  "UnsupportedMediaTypeException",
  "ModeNotSupportedException",
  "NoPublishedVersionException",
  "RecursiveInvocationException",
  // Not authorized (IAM, signature, credentials).
  "AccessDeniedException",
  "UnrecognizedClientException",
  "InvalidSignatureException",
  "ExpiredTokenException",
  // The execution environment could not be set up: VPC network interfaces...
  "EC2AccessDeniedException",
  "EC2ThrottledException",
  "EC2UnexpectedException",
  "ENILimitReachedException",
  "ENINotReadyException",
  "SubnetIPAddressLimitReachedException",
  "InvalidSubnetIDException",
  "InvalidSecurityGroupIDException",
  // ...the environment variables' key, the code package and runtime...
  "KMSAccessDeniedException",
  "KMSDisabledException",
  "KMSInvalidStateException",
  "KMSNotFoundException",
  "InvalidRuntimeException",
  "InvalidZipFileException",
  "CodeArtifactUserDeletedException",
  "CodeArtifactUserFailedException",
  "CodeArtifactUserPendingException",
  // ...mounting file systems, or restoring a snapshot (all before the handler is called).
  "EFSMountConnectivityException",
  "EFSMountFailureException",
  "EFSMountTimeoutException",
  "S3FilesMountConnectivityException",
  "S3FilesMountFailureException",
  "S3FilesMountTimeoutException",
  "SnapStartException",
  "SnapStartNotReadyException",
  "SnapStartRegenerationFailureException",
  "SnapStartTimeoutException",
  // The SDK found no credentials: nothing was sent.
  "CredentialsProviderError",
]);

/** Socket errors that happen while connecting (or resolving), before a byte is sent. */
const NOT_CONNECTED: ReadonlySet<string> = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN"]);
const CONNECT_SYSCALLS: ReadonlySet<string> = new Set(["connect", "getaddrinfo"]);

function certainlyNotStarted(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (NOT_STARTED.has(error.name)) return true;
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  if (status === 429) return true;
  return notConnected(error);
}

/** A failed connect; Node reports one per address tried (AggregateError) when it tries several. */
function notConnected(error: unknown): boolean {
  if (error instanceof AggregateError && error.errors.length > 0) {
    return error.errors.every(notConnected);
  }
  const { code, syscall } = error as { code?: unknown; syscall?: unknown };
  return (
    typeof code === "string" &&
    NOT_CONNECTED.has(code) &&
    typeof syscall === "string" &&
    CONNECT_SYSCALLS.has(syscall)
  );
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

function decode(payload: Uint8Array | undefined): string {
  return payload ? new TextDecoder().decode(payload) : "";
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The handler's answer: the finished call, or null when it finished nothing. */
function parseCall(
  payload: string,
  handlerId: string,
  context: Record<string, unknown>,
): CallRecord | undefined {
  if (payload.trim() === "" || payload.trim() === "null") return undefined;
  const json = parseJson(payload);
  const parsed = callRecord.safeParse(json);
  if (!parsed.success) {
    // It ran: the answer just cannot be read (e.g. a handler of another version mid-deploy).
    throw new ToolbusError(`Handler ${handlerId} answered with something other than a call.`, {
      context: {
        ...context,
        issues: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`),
      },
    });
  }
  return parsed.data;
}
