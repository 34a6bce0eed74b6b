import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError } from './api';

export type Answer<T> = { state: 'loading' } | { state: 'ok'; value: T } | { state: 'error'; error: unknown };

/**
 * Runs `load` whenever `deps` change; an answer that arrives after a newer request is dropped, and
 * the answer to older deps is never shown beside newer ones (the render that brings new deps runs
 * before the effect that starts their request, and would otherwise show the previous answer).
 */
export function useAnswer<T>(load: () => Promise<T>, deps: unknown[]): Answer<T> {
  const [held, setHeld] = useState<{ deps: unknown[]; answer: Answer<T> }>({ deps, answer: { state: 'loading' } });
  useEffect(() => {
    let current = true;
    setHeld({ deps, answer: { state: 'loading' } });
    load().then(
      (value) => current && setHeld({ deps, answer: { state: 'ok', value } }),
      (error: unknown) => current && setHeld({ deps, answer: { state: 'error', error } }),
    );
    return () => {
      current = false;
    };
  }, deps);
  const sameDeps = held.deps.length === deps.length && held.deps.every((value, i) => Object.is(value, deps[i]));
  return sameDeps ? held.answer : { state: 'loading' };
}

/** The service's error body as it came, or the failure's message. */
export function ErrorView(props: { error: unknown }) {
  const { error } = props;
  return (
    <div class="error" role="alert">
      {error instanceof ApiError ? (
        <>
          <strong>The service answered {error.status}</strong>
          <pre>{JSON.stringify(error.body, null, 2)}</pre>
        </>
      ) : (
        <strong>{error instanceof Error ? error.message : String(error)}</strong>
      )}
    </div>
  );
}

export function Show<T>(props: { answer: Answer<T>; children: (value: T) => ComponentChildren }) {
  const { answer } = props;
  if (answer.state === 'loading') return <p class="loading">Loading…</p>;
  if (answer.state === 'error') return <ErrorView error={answer.error} />;
  return <>{props.children(answer.value)}</>;
}
