import { trace } from '@opentelemetry/api';
import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface LoggerSettings {
  /** `service` of every line: the OTel service name (`tms-gateway`, `tms-indexer`, `tms-mcp`). */
  service: string;
  level: LogLevel;
  /** Paths whose values are replaced by `[Redacted]`. */
  redact?: string[];
  /** Write to stderr (synchronously) instead of stdout: `svc mcp`, whose stdout carries MCP messages. */
  stderr?: boolean;
  /**
   * Gather stdout lines into writes of `BUFFERED_BYTES`, or whatever gathered every
   * `BUFFERED_FLUSH_MS`: the gateway's line per request, written alone, cost about 3% of its
   * reads' throughput (docs/performance.md). Lines still buffered are written when the
   * process exits, also on an uncaught error; a SIGKILL loses at most the last interval's.
   */
  buffered?: boolean;
}

const BUFFERED_BYTES = 4096;
const BUFFERED_FLUSH_MS = 100;

/**
 * The trace and span of the active span, when one records (tracing on): every line written
 * while a request is served carries them. Without tracing there is never an active span.
 */
function traceFields(): Record<string, string> {
  const span = trace.getActiveSpan();
  if (span === undefined) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/** Drizzle's query errors spell the parameter values into their message: `Failed query: ...\nparams: ...`. */
const PARAMS_LINE = /\nparams: .*?(?=\n {4}at |\ncaused by: |$)/gs;
/**
 * Postgres quotes the value it could not take in a data exception's message (`invalid input
 * syntax for type integer: "..."`, the same for enums, json, uuid, ...).
 */
const REFUSED_VALUE =
  /(invalid input (?:syntax|value) for (?:type|enum) [^:\n]+): "[\s\S]*?"(?=$|\n {4}at |\ncaused by: )/g;
const stripParams = (text: unknown) =>
  typeof text === 'string'
    ? text.replace(PARAMS_LINE, '\nparams: [Redacted]').replace(REFUSED_VALUE, '$1: [Redacted]')
    : text;
/**
 * Properties of a driver error that carry values: the bound parameters, and Postgres's `detail`,
 * which quotes the key of a unique violation (`Key (id)=(...) already exists.`).
 */
const VALUE_PROPERTIES = ['params', 'parameters', 'detail'];

/**
 * pino's error serializer without the statement's parameter values, which hold memory text,
 * excerpts and secrets: logs keep the statement (placeholders), never what was bound to it.
 */
function errorWithoutParameters(error: Error): Record<string, unknown> {
  const serialized = pino.stdSerializers.err(error) as unknown as Record<string, unknown>;
  for (const key of VALUE_PROPERTIES) if (key in serialized) serialized[key] = '[Redacted]';
  serialized.message = stripParams(serialized.message);
  serialized.stack = stripParams(serialized.stack);
  return serialized;
}

/**
 * The one log schema of the gateway, the indexer and `svc mcp` (docs/semantics.md, "Logs"):
 * JSON lines with `time` (ISO 8601, UTC), `level` (pino's number: 10 trace .. 60 fatal), `msg`, `service`, `pid`, then the
 * line's own fields (`request_id`, `trace_id`, `span_id`, `err`, ...).
 */
export function createLogger(settings: LoggerSettings, destination?: DestinationStream): Logger {
  const options: LoggerOptions = {
    level: settings.level,
    base: { service: settings.service, pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    mixin: traceFields,
    serializers: { err: errorWithoutParameters },
    ...(settings.redact ? { redact: settings.redact } : {}),
  };
  const target =
    destination ??
    (settings.stderr
      ? pino.destination({ fd: 2, sync: true })
      : settings.buffered
        ? pino.destination({ dest: 1, sync: false, minLength: BUFFERED_BYTES, periodicFlush: BUFFERED_FLUSH_MS })
        : undefined);
  return target ? pino(options, target) : pino(options);
}
