import type { IncomingHttpHeaders } from 'node:http';
import {
  type Attributes,
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { currentTracer } from './tracing';

export interface RequestOutcome {
  /** The operation name the request resolved to (`memories.create`, `graphql`, `healthz`, ...). */
  operation: string;
  status: number;
  /** The TMS outcome code (`ok` or the spec's error code). */
  code: string;
  requestId: string;
}

export interface ServerSpan {
  /** Run `fn` with this span active: spans and log lines inside it belong to the request. */
  run<T>(fn: () => T): T;
  end(outcome: RequestOutcome): void;
}

/**
 * The server span of one HTTP request, continuing the caller's trace when it sent a W3C
 * `traceparent`. Named `METHOD operation` once the operation is known.
 */
export function startServerSpan(method: string | undefined, headers: IncomingHttpHeaders): ServerSpan {
  const parent = propagation.extract(ROOT_CONTEXT, headers);
  const span = currentTracer().startSpan(
    method ?? 'HTTP',
    { kind: SpanKind.SERVER, attributes: { 'http.request.method': method ?? '_OTHER' } },
    parent,
  );
  const active = trace.setSpan(parent, span);
  return {
    run: (fn) => context.with(active, fn),
    end(outcome) {
      if (span.isRecording()) {
        span.updateName(`${method ?? 'HTTP'} ${outcome.operation}`);
        span.setAttributes({
          'http.response.status_code': outcome.status,
          'tms.operation': outcome.operation,
          'tms.error_code': outcome.code,
          'tms.request_id': outcome.requestId,
        });
        if (outcome.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.code });
      }
      span.end();
    },
  };
}

/** Run `fn` inside a child span of the active one (a GraphQL operation); ended when it settles. */
export async function inSpan<T>(name: string, attributes: Attributes, fn: () => Promise<T>): Promise<T> {
  return currentTracer().startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn();
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}
