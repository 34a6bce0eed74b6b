import crypto from 'node:crypto';

export interface CallOptions {
  token?: string | null;
  workspace?: string | null;
  /** Idempotency-Key; mutations get a fresh one unless this is given (null omits it). */
  idem?: string | null;
  body?: unknown;
  /** Raw body bytes or text (sent instead of `body`). */
  raw?: string | Uint8Array;
  contentType?: string | null;
  query?: Record<string, string | number | boolean | undefined> | string;
  headers?: Record<string, string>;
}

export interface CallResult<T = any> {
  status: number;
  headers: Headers;
  /** Parsed JSON (or undefined when the body is not JSON). */
  body: T;
  text: string;
}

export const sha256Hex = (data: string | Uint8Array) =>
  crypto
    .createHash('sha256')
    .update(typeof data === 'string' ? Buffer.from(data, 'utf8') : data)
    .digest('hex');

export const freshKey = (prefix = 'k') => `${prefix}-${crypto.randomBytes(8).toString('hex')}`;

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** A plain HTTP caller for the /v1 API (fetch on loopback). */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly token: string | null = null,
    readonly workspace: string | null = null,
  ) {}

  as(token: string | null, workspace: string | null = this.workspace): ApiClient {
    return new ApiClient(this.baseUrl, token, workspace);
  }

  in(workspace: string | null): ApiClient {
    return new ApiClient(this.baseUrl, this.token, workspace);
  }

  async call<T = any>(method: string, path: string, options: CallOptions = {}): Promise<CallResult<T>> {
    const url = new URL(path, this.baseUrl);
    if (typeof options.query === 'string') url.search = options.query;
    else if (options.query) {
      for (const [k, v] of Object.entries(options.query)) if (v !== undefined) url.searchParams.append(k, String(v));
    }
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    const token = options.token === undefined ? this.token : options.token;
    if (token) headers.authorization = `Bearer ${token}`;
    const workspace = options.workspace === undefined ? this.workspace : options.workspace;
    if (workspace) headers['x-service-workspace'] = workspace;
    const idem = options.idem === undefined ? (MUTATING.has(method) ? freshKey() : null) : options.idem;
    if (idem) headers['idempotency-key'] = idem;
    let payload: string | Uint8Array | undefined;
    if (options.raw !== undefined) payload = options.raw;
    else if (options.body !== undefined) payload = JSON.stringify(options.body);
    const contentType =
      options.contentType === undefined ? (payload !== undefined ? 'application/json' : null) : options.contentType;
    if (contentType) headers['content-type'] = contentType;
    const res = await fetch(url, { method, headers, body: payload as RequestInit['body'] });
    const text = await res.text();
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: res.status, headers: res.headers, body, text };
  }

  get<T = any>(path: string, options?: CallOptions) {
    return this.call<T>('GET', path, options);
  }
  post<T = any>(path: string, body: unknown, options: CallOptions = {}) {
    return this.call<T>('POST', path, { ...options, body });
  }
  put<T = any>(path: string, body: unknown, options: CallOptions = {}) {
    return this.call<T>('PUT', path, { ...options, body });
  }
  patch<T = any>(path: string, body: unknown, options: CallOptions = {}) {
    return this.call<T>('PATCH', path, { ...options, body });
  }
  delete<T = any>(path: string, options?: CallOptions) {
    return this.call<T>('DELETE', path, options);
  }
}
