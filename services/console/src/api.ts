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
  ) {}

  inWorkspace(workspace: string): Api {
    return new Api(this.token, workspace);
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return {
      authorization: `Bearer ${this.token}`,
      ...(this.workspace ? { 'x-service-workspace': this.workspace } : {}),
      ...extra,
    };
  }

  async get<T>(path: string, query: Query = {}): Promise<T> {
    return this.answer<T>(await fetch(pathWithQuery(path, query), { headers: this.headers(), cache: 'no-store' }));
  }

  async post<T>(path: string, body: unknown): Promise<T> {
    const init = { method: 'POST', headers: this.headers({ 'content-type': 'application/json' }) };
    return this.answer<T>(await fetch(path, { ...init, body: JSON.stringify(body), cache: 'no-store' }));
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
   * A subscription over server-sent events (GraphQL over SSE, distinct connections): `onEvent` for
   * each `next` event until the stream completes (its last event may carry errors) or `signal` aborts.
   */
  async subscribe(
    query: string,
    variables: Record<string, unknown>,
    onEvent: (payload: { data?: unknown; errors?: unknown[] }) => void,
    signal: AbortSignal,
  ): Promise<void> {
    const response = await fetch('/graphql', {
      method: 'POST',
      headers: this.headers({ 'content-type': 'application/json', accept: 'text/event-stream' }),
      body: JSON.stringify({ query, variables }),
      signal,
      cache: 'no-store',
    });
    if (!response.ok || !response.body) throw new ApiError(response.status, await response.json().catch(() => null));
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const lines = block.split('\n');
        const event = lines
          .find((line) => line.startsWith('event:'))
          ?.slice(6)
          .trim();
        const data = lines
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).trimStart())
          .join('\n');
        if (event === 'complete') return;
        if (data) onEvent(JSON.parse(data));
      }
    }
  }
}
