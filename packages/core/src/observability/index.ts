export { type CallObservers, callFields, reportFinished } from "./calls";
export {
  createLogger,
  jsonLines,
  LOG_LEVELS,
  type LogFields,
  type Logger,
  type LogLevel,
  type LogRecord,
} from "./log";
export {
  callMetricPoints,
  emfMetrics,
  InProcessMetrics,
  type MetricsSink,
  type MetricsSnapshot,
} from "./metrics";
export { prettyLines } from "./pretty";
export { formatTraceparent, newTrace, parseTraceparent, type TraceContext } from "./trace-context";
