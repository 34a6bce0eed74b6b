import { Meilisearch, MeilisearchApiError } from 'meilisearch';

/**
 * The uid of the gateway's search key. Meilisearch derives a key's value from its uid and the
 * master key, so a fixed uid gives the same key on every run: creating it is idempotent.
 */
export const SEARCH_KEY_UID = '8f3c2a61-4b7e-4d15-9a0c-6e2f1b7d5c43';

/** The only action the gateway takes on Meilisearch: recall's `POST /indexes/{uid}/search`. */
export const GATEWAY_SEARCH_ACTIONS = ['search'] as const;

export interface SearchKeyRequest {
  url: string;
  /** The master key (or a key allowed `keys.get`, `keys.create` and `keys.delete`). */
  adminKey: string | undefined;
  uid?: string;
  indexes: readonly string[];
  timeoutMs?: number;
}

export interface SearchKey {
  uid: string;
  key: string;
  /** `created`, `found` (already as asked) or `replaced` (it had other rights, which cannot be edited). */
  outcome: 'created' | 'found' | 'replaced';
}

const sameSet = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');

/**
 * Create, or find, the key limited to searching `indexes` and never expiring. A key with this
 * uid but other rights is deleted and created again: Meilisearch lets a key's name and
 * description change, never its actions or indexes.
 */
export async function ensureSearchKey(request: SearchKeyRequest): Promise<SearchKey> {
  try {
    return await createOrFind(request);
  } catch (error) {
    if (error instanceof MeilisearchApiError) {
      throw new Error(`Meilisearch at ${request.url} refused: ${error.message}`, { cause: error });
    }
    throw new Error(`cannot reach Meilisearch at ${request.url} (${rootCause(error)})`, { cause: error });
  }
}

/** The innermost reason of a failed request (`ECONNREFUSED`, a DNS failure, a timeout). */
function rootCause(error: unknown): string {
  let inner = error as Error & { code?: string };
  while (inner.cause instanceof Error) inner = inner.cause as Error & { code?: string };
  return inner.code ?? inner.message;
}

async function createOrFind(request: SearchKeyRequest): Promise<SearchKey> {
  const uid = request.uid ?? SEARCH_KEY_UID;
  const client = new Meilisearch({ host: request.url, apiKey: request.adminKey, timeout: request.timeoutMs ?? 10_000 });
  const existing = await client.getKey(uid).catch((error: unknown) => {
    if (error instanceof MeilisearchApiError && error.cause?.code === 'api_key_not_found') return null;
    throw error;
  });
  if (
    existing &&
    sameSet(existing.actions, GATEWAY_SEARCH_ACTIONS) &&
    sameSet(existing.indexes, request.indexes) &&
    existing.expiresAt === null
  ) {
    return { uid, key: existing.key, outcome: 'found' };
  }
  if (existing) await client.deleteKey(uid);
  const created = await client.createKey({
    uid,
    name: 'tms-gateway-search',
    description: 'Temporal Memory Service gateway: search only (svc search create-key)',
    actions: [...GATEWAY_SEARCH_ACTIONS],
    indexes: [...request.indexes],
    expiresAt: null,
  });
  return { uid, key: created.key, outcome: existing ? 'replaced' : 'created' };
}
