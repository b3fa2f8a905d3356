import { LocalRuntimeError } from "../errors";

const JAVA_INSTALL_HINT =
  "Install Java 17 or newer: on Debian/Ubuntu `apt-get install -y openjdk-17-jre-headless`, " +
  "on macOS `brew install openjdk@17`. To use a java binary that is not on PATH, set " +
  "TOOLBUS_JAVA=/path/to/java (or pass the javaPath option).";

/** No usable Java runtime: DynamoDB Local is a Java program and cannot start without one. */
export class JavaNotFoundError extends LocalRuntimeError {
  override name = "JavaNotFoundError";

  constructor(
    reason: string,
    options: { cause?: unknown; context?: Record<string, unknown> } = {},
  ) {
    super(`Java 17+ is needed for DynamoDB Local, but ${reason}. ${JAVA_INSTALL_HINT}`, options);
  }
}

/** DynamoDB Local did not come up: the JVM exited early, or it did not answer in time. */
export class DynamoDbLocalStartError extends LocalRuntimeError {
  override name = "DynamoDbLocalStartError";
}
