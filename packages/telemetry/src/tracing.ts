import { context, propagation, type Tracer, trace } from '@opentelemetry/api';

export interface TracingSettings {
  /** OTEL_EXPORTER_OTLP_ENDPOINT: the collector's base URL; spans go to `<endpoint>/v1/traces`. */
  endpoint: string | undefined;
  /** OTEL_SERVICE_NAME. */
  serviceName: string;
}

export interface Tracing {
  /** Whether spans are recorded and exported (an endpoint is set). */
  readonly enabled: boolean;
  /** The OTLP/HTTP URL spans are sent to, or null when tracing is off. */
  readonly exportUrl: string | null;
  /** Export the spans still queued (tests read them at once). */
  flush(): Promise<void>;
  /** Flush, then stop exporting (on shutdown). */
  shutdown(): Promise<void>;
}

const OFF: Tracing = {
  enabled: false,
  exportUrl: null,
  flush: async () => {},
  shutdown: async () => {},
};

let current: Tracing = OFF;
/** The gateway's tracer: the no-op API's until tracing starts, the provider's while it runs. */
let tracer: Tracer = trace.getTracer('tms');

/** The tracer for the gateway's own spans (requests, GraphQL operations). */
export function currentTracer(): Tracer {
  return tracer;
}

/** The process's tracing, as `startTracing` set it up (off until then). */
export function activeTracing(): Tracing {
  return current;
}

/** `<endpoint>/v1/traces`, as the OTLP spec builds the signal URL from the base endpoint. */
export function tracesUrl(endpoint: string): string {
  return `${endpoint.replace(/\/+$/, '')}/v1/traces`;
}

/**
 * With an endpoint: register a tracer provider that batches spans to it over OTLP/HTTP (JSON),
 * the W3C `traceparent` propagator and an AsyncLocalStorage context, once per process.
 * Without one nothing is loaded: the OpenTelemetry API stays the no-op it is by default, so
 * instrumented code costs next to nothing per request.
 */
export async function startTracing(settings: TracingSettings): Promise<Tracing> {
  if (settings.endpoint === undefined || current.enabled) return current;
  const [{ TracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }, core, asyncHooks] =
    await Promise.all([
      import('@opentelemetry/sdk-trace'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/core'),
      import('@opentelemetry/context-async-hooks'),
    ]);
  const { ATTR_SERVICE_NAME } = await import('@opentelemetry/semantic-conventions');
  const url = tracesUrl(settings.endpoint);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url }) })],
  });
  context.setGlobalContextManager(new asyncHooks.AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new core.W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  tracer = provider.getTracer('tms');
  current = {
    enabled: true,
    exportUrl: url,
    flush: () => provider.forceFlush(),
    async shutdown() {
      try {
        await provider.shutdown();
      } finally {
        // Back to the no-op API, so the process (or a test's next gateway) may start again.
        trace.disable();
        propagation.disable();
        context.disable();
        current = OFF;
        tracer = trace.getTracer('tms');
      }
    },
  };
  return current;
}
