import { createClient } from 'graphql-sse';

/**
 * The console's only way to the service: the public /v1 API and /graphql, with the signed-in
 * bearer token and the selected workspace. Answers are shown as they come; nothing is filled in.
 */

export interface Commit {
  sequence: number;
  recorded_at: number;
}
export interface Namespace {
  id: string;
  workspace_id: string;
  parent_id: string | null;
  name: string;
  display_path: string[];
  created_at: number;
  updated_at: number;
}
export interface Evidence {
  id: string;
  namespace_id: string;
  source_locator: string;
  content_root_sha256: string;
  excerpt: string;
  excerpt_sha256: string;
  recorder_actor_id: string;
  recorded_at: number;
}
export interface Verification {
  id: string;
  evidence_id: string;
  content_root_sha256: string;
  excerpt_sha256: string;
  verdict: 'verified' | 'rejected';
  verifier_actor_id: string;
  recorded_at: number;
}
export interface Memory {
  id: string;
  namespace_id: string;
  kind: string;
  generation: number;
}
export interface Invalidation {
  recorded_at: number;
  cause_revision_id: string;
  reason: 'support_corrected' | 'support_deleted';
}
export interface Revision {
  id: string;
  memory_id: string;
  namespace_id: string;
  kind: string;
  generation: number;
  text: string;
  status: 'candidate' | 'asserted';
  valid_from: number;
  valid_to: number | null;
  recorded_at: number;
  recorded_until: number | null;
  evidence_ids: string[];
  support_revision_ids: string[];
  attestation: { id: string; verification_ids: string[]; recorded_at: number } | null;
  invalidation: Invalidation | null;
}
export interface MemoryRead {
  view: { memory: Memory; revision: Revision; evidence: Evidence[]; verifications: Verification[]; stale: boolean };
  as_of: number;
  known_at: number;
}
export interface ChangeSubject {
  type: string;
  id: string;
  namespace_id: string | null;
}
export interface Change {
  sequence: number;
  recorded_at: number;
  operation: string;
  actor_id: string;
  subjects: ChangeSubject[];
}
export interface RecallAnswer {
  status: string;
  indexed_sequence: number;
  context_chars: number;
  retrieval: { mode: string; lexical: string; semantic: string };
  items: {
    memory: Memory;
    revision: Revision;
    score: number;
    stale: boolean;
    ranks: { lexical: number | null; semantic: number | null };
  }[];
}

/** The service's error body, kept whole so the person sees exactly what it said. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    const code = (body as { error?: { code?: string } } | null)?.error?.code;
    super(`${status}${code ? ` ${code}` : ''}`);
  }

  get code(): string | undefined {
    return (this.body as { error?: { code?: string } } | null)?.error?.code;
  }
}

export type Query = Record<string, string | number | boolean | undefined>;

/** `path?query` with the parameters in the order given (the call shown to people). */
export function pathWithQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  const search = params.toString();
  return search ? `${path}?${search}` : path;
}

export class Api {
  constructor(
    readonly token: string,
    readonly workspace: string | null,
    /** Where the service is: the page's own origin (relative paths) unless given. */
    readonly origin = '',
  ) {}

  inWorkspace(workspace: string): Api {
    return new Api(this.token, workspace, this.origin);
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return {
      authorization: `Bearer ${this.token}`,
      ...(this.workspace ? { 'x-service-workspace': this.workspace } : {}),
      ...extra,
    };
  }

  async get<T>(path: string, query: Query = {}): Promise<T> {
    const url = `${this.origin}${pathWithQuery(path, query)}`;
    return this.answer<T>(await fetch(url, { headers: this.headers(), cache: 'no-store' }));
  }

  async post<T>(path: string, body: unknown): Promise<T> {
    const init = { method: 'POST', headers: this.headers({ 'content-type': 'application/json' }) };
    return this.answer<T>(
      await fetch(`${this.origin}${path}`, { ...init, body: JSON.stringify(body), cache: 'no-store' }),
    );
  }

  private async answer<T>(response: Response): Promise<T> {
    const body: unknown = await response.json().catch(() => null);
    if (!response.ok) throw new ApiError(response.status, body);
    return body as T;
  }

  /** A GraphQL query: its data, with the errors of fields that failed (e.g. `grants` for a non-admin). */
  async graphql<T>(query: string, variables: Record<string, unknown> = {}): Promise<{ data: T; errors: unknown[] }> {
    const body = await this.post<{ data?: T; errors?: unknown[] }>('/graphql', { query, variables });
    if (!body.data) throw new ApiError(200, body);
    return { data: body.data, errors: body.errors ?? [] };
  }

  /**
   * A subscription over server-sent events (GraphQL over SSE, distinct connections, read by
   * graphql-sse's client): `onEvent` for each `next` event until the stream completes (its last
   * event may carry errors) or `signal` aborts. A refused request rejects with its `ApiError`;
   * the caller retries (graphql-sse's own retries would resend the first `after`).
   */
  subscribe(
    query: string,
    variables: Record<string, unknown>,
    onEvent: (payload: { data?: unknown; errors?: readonly unknown[] }) => void,
    signal: AbortSignal,
  ): Promise<void> {
    let refused: ApiError | null = null;
    const client = createClient({
      url: `${this.origin}/graphql`,
      headers: this.headers(),
      retryAttempts: 0,
      // A refusal's body is read before graphql-sse lets the connection go: the error shows what
      // the service said.
      fetchFn: async (input: RequestInfo | URL, init?: RequestInit) => {
        const response = await fetch(input, init);
        if (!response.ok) refused = new ApiError(response.status, await response.json().catch(() => null));
        return response;
      },
    });
    return new Promise<void>((resolve, reject) => {
      const stop = () => dispose();
      const finish = () => {
        signal.removeEventListener('abort', stop);
        client.dispose();
      };
      const dispose = client.subscribe(
        { query, variables },
        {
          next: onEvent,
          complete: () => {
            finish();
            resolve();
          },
          error: (error: unknown) => {
            finish();
            reject(refused ?? (error instanceof Error ? error : new Error(String(error))));
          },
        },
      );
      if (signal.aborted) stop();
      else signal.addEventListener('abort', stop, { once: true });
    });
  }
}
