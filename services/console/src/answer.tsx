import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError } from './api';

export type Answer<T> = { state: 'loading' } | { state: 'ok'; value: T } | { state: 'error'; error: unknown };

/** Runs `load` whenever `deps` change; an answer that arrives after a newer request is dropped. */
export function useAnswer<T>(load: () => Promise<T>, deps: unknown[]): Answer<T> {
  const [answer, setAnswer] = useState<Answer<T>>({ state: 'loading' });
  useEffect(() => {
    let current = true;
    setAnswer({ state: 'loading' });
    load().then(
      (value) => current && setAnswer({ state: 'ok', value }),
      (error: unknown) => current && setAnswer({ state: 'error', error }),
    );
    return () => {
      current = false;
    };
  }, deps);
  return answer;
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
