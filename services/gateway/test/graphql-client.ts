// biome-ignore-all lint/suspicious/noExplicitAny: GraphQL answers are walked as plain JSON in tests.
import http from 'node:http';
import { freshKey } from '@tms/testkit';

export interface GraphqlResult<T = any> {
  status: number;
  headers: Headers;
  text: string;
  body: {
    data?: T;
    errors?: { message: string; path?: (string | number)[]; extensions: Record<string, unknown> }[];
  } & Record<string, any>;
}

/** A plain GraphQL-over-HTTP caller for tests (fetch on loopback). */
export class GraphqlClient {
  constructor(
    readonly baseUrl: string,
    readonly token: string | null,
    readonly workspace: string | null = null,
  ) {}

  in(workspace: string | null): GraphqlClient {
    return new GraphqlClient(this.baseUrl, this.token, workspace);
  }

  async request<T = any>(
    query: string,
    variables: Record<string, unknown> = {},
    options: { headers?: Record<string, string>; accept?: string; operationName?: string } = {},
  ): Promise<GraphqlResult<T>> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: options.accept ?? 'application/graphql-response+json',
      ...(options.headers ?? {}),
    };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (this.workspace) headers['x-service-workspace'] = this.workspace;
    const res = await fetch(`${this.baseUrl}/graphql`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        query,
        variables,
        ...(options.operationName ? { operationName: options.operationName } : {}),
      }),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, body: JSON.parse(text) };
  }

  /** Run a query and fail loudly on any error. */
  async data<T = any>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
    const result = await this.request<T>(query, variables);
    if (result.body.errors?.length || result.status !== 200) {
      throw new Error(`GraphQL failed (${result.status}): ${result.text}`);
    }
    return result.body.data as T;
  }
}

export { freshKey };

/** snake_case every key, deeply (GraphQL answers back to /v1 field names). */
export function snakeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k.replace(/[A-Z]/g, (m) => `_${m.toLowerCase()}`), snakeKeys(v)]),
    );
  }
  return value;
}

/** Selections of every /v1 field of each resource. */
export const FRAGMENTS: Record<string, string> = {
  W: 'fragment W on Workspace { id name createdAt }',
  N: 'fragment N on Namespace { id workspaceId parentId name displayPath createdAt updatedAt }',
  E: 'fragment E on Evidence { id namespaceId sourceLocator contentRootSha256 excerpt excerptSha256 recorderActorId recordedAt }',
  V: 'fragment V on Verification { id evidenceId contentRootSha256 excerptSha256 verdict verifierActorId recordedAt }',
  M: 'fragment M on Memory { id namespaceId kind generation key }',
  R: `fragment R on MemoryRevision {
    id memoryId namespaceId kind generation text status validFrom validTo recordedAt recordedUntil
    evidenceIds supportRevisionIds
    attestation { id claimText claimSha256 evidenceIds verificationIds verifierActorId recordedAt }
    invalidation { recordedAt causeRevisionId reason }
  }`,
  C: 'fragment C on Commit { sequence recordedAt }',
  G: `fragment G on Grant {
    target {
      ... on ActorGrantTarget { kind actorId }
      ... on InstallationGrantTarget { kind productInstallationId }
      ... on CredentialGrantTarget { kind credentialId }
    }
    capabilities inherit
  }`,
  MR: 'fragment MR on MemoryDeletionReceipt { id memoryId namespaceId mode revisionIds erasedTextSha256 erasedKeySha256 recorderActorId recordedAt }',
  ER: 'fragment ER on EvidenceDeletionReceipt { id evidenceId namespaceId mode erasedExcerptSha256 recorderActorId recordedAt }',
};

/** A document with the fragments it spreads appended. */
export function gql(query: string): string {
  const used = new Set<string>();
  const visit = (text: string) => {
    for (const [, name] of text.matchAll(/\.\.\.([A-Z][A-Za-z]*)\b/g)) {
      if (name && FRAGMENTS[name] && !used.has(name)) {
        used.add(name);
        visit(FRAGMENTS[name]);
      }
    }
  };
  visit(query);
  return [query, ...[...used].map((name) => FRAGMENTS[name])].join('\n');
}

/** A connection back to a /v1 page: `{ [key]: nodes, next_cursor }`. */
export function page(connection: { edges: { node: unknown }[]; pageInfo: { endCursor: string | null } }, key: string) {
  return { [key]: connection.edges.map((e) => e.node), next_cursor: connection.pageInfo.endCursor };
}

/** An HTTP answer as sent: status, headers in order (but the clock's and the connection's), body. */
export interface RawAnswer {
  status: number;
  headers: [string, string][];
  body: string;
}

/** One HTTP exchange with exact control of the headers sent (fetch adds `accept: *\/*`). */
export function exchange(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${baseUrl}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const pairs: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          const name = (res.rawHeaders[i] ?? '').toLowerCase();
          // The clock and the connection's own bookkeeping differ between any two answers.
          if (name === 'date' || name === 'keep-alive' || name === 'connection') continue;
          pairs.push([name, res.rawHeaders[i + 1] ?? '']);
        }
        resolve({ status: res.statusCode ?? 0, headers: pairs, body: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A counter's value on a gateway's `/metrics` (0 when it has not been counted yet). */
export async function metricValue(baseUrl: string, series: string): Promise<number> {
  const text = (await exchange(baseUrl, 'GET', '/metrics', {})).body;
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return Number(line?.split(' ')[1] ?? 0);
}
