export { createLogger, type LoggerSettings, type LogLevel } from './logger';
export { inSpan, type RequestOutcome, type ServerSpan, startServerSpan } from './spans';
export { activeTracing, startTracing, type Tracing, type TracingSettings, tracesUrl } from './tracing';
