import type {
  EvidenceRow,
  IdempotencyRecord,
  KeyScope,
  NamespaceRow,
  RevisionRow,
  Standing,
  StandingQuery,
  Stores,
  VerificationRow,
} from '@tms/ledger';
import DataLoader from 'dataloader';

/**
 * The reads of one batch of a bulk import, gathered. The writes of a batch run their rules all at
 * once; each read they make is held until every write waits (`setImmediate`: the microtasks
 * drained), then each kind goes to the database as one statement for the lot, and every call is
 * answered exactly as its own statement would answer it. So a batch's phase one costs a few
 * statements whatever its size, where each write's own reads would cost several apiece.
 */
export function batchingReads(stores: Stores): Stores {
  const options = { cache: false, batchScheduleFn: afterEveryWriteWaits };

  const records = new DataLoader<RecordRequest, RecordAnswer, RecordRequest>(
    (requests) => loadRecords(stores, requests),
    options,
  );
  const evidenceByHash = new DataLoader<HashRequest, EvidenceRow | null>(async (requests) => {
    const answers: (EvidenceRow | null)[] = [];
    for (const [workspaceId, group] of groupBy(requests, (r) => r.workspaceId)) {
      const rows = await stores.evidence.findByHashes(workspaceId, group.items);
      const found = new Map(rows.map((row) => [`${row.namespaceId}\u0000${row.excerptSha256}`, row]));
      group.answer(answers, (r) => found.get(`${r.namespaceId}\u0000${r.excerptSha256}`) ?? null);
    }
    return answers;
  }, options);
  const keyHolders = new DataLoader<KeyRequest, string | null>(async (requests) => {
    const answers: (string | null)[] = [];
    for (const [workspaceId, group] of groupBy(requests, (r) => r.workspaceId)) {
      const rows = await stores.memories.keyHolders(workspaceId, group.items);
      const found = new Map(rows.map((row) => [`${row.namespaceId}\u0000${row.key}`, row.id]));
      group.answer(answers, (r) => found.get(`${r.namespaceId}\u0000${r.key}`) ?? null);
    }
    return answers;
  }, options);
  const evidenceById = byIdLoader<EvidenceRow>((workspaceId, ids) => stores.evidence.getMany(workspaceId, ids));
  const revisionsById = byIdLoader<RevisionRow>((workspaceId, ids) => stores.memories.getRevisions(workspaceId, ids));
  const verifications = new DataLoader<VerificationRequest, VerificationRow[]>(async (requests) => {
    const answers: VerificationRow[][] = [];
    for (const [, group] of groupBy(requests, (r) => `${r.workspaceId}\u0000${r.knownAt}`)) {
      const first = group.items[0] as VerificationRequest;
      const ids = [...new Set(group.items.map((r) => r.evidenceId))];
      const rows = await stores.evidence.verificationsOf(first.workspaceId, ids, first.knownAt);
      group.answer(answers, (r) => rows.filter((row) => row.evidenceId === r.evidenceId));
    }
    return answers;
  }, options);

  const idempotency: Stores['idempotency'] = Object.create(stores.idempotency);
  idempotency.findWithStanding = (principal, key, workspaceId, query, namespaceIds, scope) =>
    records.load({ principal, key, workspaceId, query, namespaceIds, scope });

  const evidence: Stores['evidence'] = Object.create(stores.evidence);
  evidence.findByHash = (workspaceId, namespaceId, excerptSha256) =>
    evidenceByHash.load({ workspaceId, namespaceId, excerptSha256 });
  evidence.getMany = async (workspaceId, ids) =>
    present(await evidenceById.loadMany(ids.map((id) => ({ workspaceId, id }))));
  evidence.verificationsOf = async (workspaceId, evidenceIds, knownAt) => {
    const lists = await verifications.loadMany(evidenceIds.map((evidenceId) => ({ workspaceId, evidenceId, knownAt })));
    // As one statement for these ids would order them: oldest first, then by id.
    return present(lists)
      .flat()
      .sort((a, b) => a.recordedAt - b.recordedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  };

  const memories: Stores['memories'] = Object.create(stores.memories);
  memories.keyHolder = (workspaceId, namespaceId, key) => keyHolders.load({ workspaceId, namespaceId, key });
  memories.getRevisions = async (workspaceId, ids) =>
    present(await revisionsById.loadMany(ids.map((id) => ({ workspaceId, id }))));

  const copy: Stores = Object.assign(Object.create(Object.getPrototypeOf(stores)), stores);
  Object.defineProperty(copy, 'idempotency', { value: idempotency });
  Object.defineProperty(copy, 'evidence', { value: evidence });
  Object.defineProperty(copy, 'memories', { value: memories });
  return copy;
}

/** A turn of the event loop later: every write of the batch has run as far as it can without a read. */
function afterEveryWriteWaits(run: () => void): void {
  setImmediate(run);
}

interface RecordRequest {
  principal: string;
  key: string;
  workspaceId: string;
  query: StandingQuery;
  namespaceIds: readonly string[];
  scope: KeyScope;
}

interface RecordAnswer {
  record: IdempotencyRecord | null;
  standing: Standing;
  namespaces: NamespaceRow[];
}

interface HashRequest {
  workspaceId: string;
  namespaceId: string;
  excerptSha256: string;
}

interface KeyRequest {
  workspaceId: string;
  namespaceId: string;
  key: string;
}

interface VerificationRequest {
  workspaceId: string;
  evidenceId: string;
  knownAt: number;
}

/**
 * The records of several writes with their standing: one statement per caller (the writes of an
 * import share one), naming every namespace any of them names.
 */
async function loadRecords(stores: Stores, requests: readonly RecordRequest[]): Promise<RecordAnswer[]> {
  const answers: RecordAnswer[] = [];
  const callers = groupBy(
    requests,
    (r) => `${r.principal}\u0000${r.workspaceId}\u0000${r.scope}\u0000${JSON.stringify(r.query)}`,
  );
  for (const [, group] of callers) {
    const { principal, workspaceId, query, scope } = group.items[0] as RecordRequest;
    const keys = [...new Set(group.items.map((r) => r.key))];
    const named = [...new Set(group.items.flatMap((r) => r.namespaceIds))];
    const loaded = await stores.idempotency.findManyWithStanding(principal, keys, workspaceId, query, named, scope);
    group.answer(answers, (r) => ({
      record: loaded.records.get(r.key) ?? null,
      standing: loaded.standing,
      namespaces: loaded.namespaces,
    }));
  }
  return answers;
}

/** Rows by id: one statement per workspace for every id asked in the turn (absent ids answer null). */
function byIdLoader<Row extends { id: string }>(
  getMany: (workspaceId: string, ids: readonly string[]) => Promise<Row[]>,
): DataLoader<{ workspaceId: string; id: string }, Row | null> {
  return new DataLoader(
    async (requests) => {
      const answers: (Row | null)[] = [];
      for (const [workspaceId, group] of groupBy(requests, (r) => r.workspaceId)) {
        const rows = await getMany(workspaceId, [...new Set(group.items.map((r) => r.id))]);
        const byId = new Map(rows.map((row) => [row.id, row]));
        group.answer(answers, (r) => byId.get(r.id) ?? null);
      }
      return answers;
    },
    { cache: false, batchScheduleFn: afterEveryWriteWaits },
  );
}

/** Requests grouped by a key, each group able to answer its requests in the places they were asked. */
function groupBy<R>(requests: readonly R[], keyOf: (request: R) => string) {
  const groups = new Map<string, { items: R[]; places: number[] }>();
  requests.forEach((request, place) => {
    const key = keyOf(request);
    let group = groups.get(key);
    if (!group) {
      group = { items: [], places: [] };
      groups.set(key, group);
    }
    group.items.push(request);
    group.places.push(place);
  });
  return [...groups].map(
    ([key, group]) =>
      [
        key,
        {
          items: group.items,
          answer<A>(answers: A[], answerOf: (request: R) => A) {
            group.items.forEach((request, i) => {
              answers[group.places[i] as number] = answerOf(request);
            });
          },
        },
      ] as const,
  );
}

/** The values of `loadMany` (an error in any of them is thrown), absent ones left out. */
function present<T>(values: readonly (T | null | Error)[]): T[] {
  const found: T[] = [];
  for (const value of values) {
    if (value instanceof Error) throw value;
    if (value !== null) found.push(value);
  }
  return found;
}
