import {
  BaseStore,
  type GetOperation,
  type Item,
  type ListNamespacesOperation,
  type MatchCondition,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchOperation,
} from '@langchain/langgraph';
import { type SearchItem, validateNamespace } from '@langchain/langgraph-checkpoint';
import { isServiceError } from '@tms/agent-memory';
import type { MemoryListItem, RecallOutput, TmsClient } from '@tms/client';
import { NamespaceDirectory, pathKey } from './namespaces';
import { matchesFilter, textValue, valueText } from './values';

type Kind = 'claim' | 'episode' | 'procedure';
type RecallStatus = RecallOutput['status'];

export interface TmsStoreOptions {
  /** A `@tms/client` client bound to a workspace. */
  client: TmsClient;
  /**
   * Read the store as it was at this time (Unix seconds): what it held then. Alone, it is also
   * `knownAt`; a store reading the past is read-only.
   */
  asOf?: number;
  /** Read the store as the service knew it at this time (Unix seconds); alone, it is also `asOf`. */
  knownAt?: number;
  /** The kind of the memories `put` creates. Default `claim`. */
  kind?: Kind;
  /** How a search with a `query` ranks: `hybrid` (default), `lexical` or `semantic`. */
  mode?: 'hybrid' | 'lexical' | 'semantic';
  /**
   * Give every item the sequence of the commit that wrote it, asking `ledger.proof` for those this
   * store did not write itself (a proof costs the service a pass over the commits since). Default
   * true; false leaves `sequence` null on those items.
   */
  resolveSequences?: boolean;
}

/** An item of a TmsStore: LangGraph's item plus where it lives in the ledger. */
export interface TmsItem extends Item {
  /** The memory holding the item (its `key` is the item's key). */
  memoryId: string;
  /** The revision read: the item's value as of the read. */
  revisionId: string;
  generation: number;
  kind: Kind;
  /** The commit that wrote this revision, or null when it could not be had (see `resolveSequences`). */
  sequence: number | null;
  validFrom: number;
  validTo: number | null;
  /**
   * `updatedAt` exactly, in Unix seconds (a Date holds whole milliseconds): what `asOf` and
   * `knownAt` take to read the store as this revision left it.
   */
  recordedAt: number;
  /** A memory this one cites has changed since (decisions §3). */
  stale: boolean;
}

/** An item a search found: with a query, ranked by recall. */
export interface TmsSearchItem extends TmsItem, SearchItem {
  /** The fused score of recall (comparable within one answer only); absent for a listing. */
  score?: number;
  /** Each arm's 1-based rank, null where that arm did not find it; absent for a listing. */
  ranks?: { lexical: number | null; semantic: number | null };
  /** The status of the recall answer the item came from; absent for a listing. */
  recallStatus?: RecallStatus;
}

/** A query search ranks at most this many items: recall's `max_items`. */
const RECALL_MAX_ITEMS = 100;
/** The longest `wait_ms` recall accepts. */
const RECALL_MAX_WAIT_MS = 10_000;
/** Attempts of a put or delete that meets concurrent changes of the same key, a short random pause between them. */
const WRITE_ATTEMPTS = 10;
const pause = () => new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 45));
/** Namespaces probed at once by `listNamespaces`. */
const PROBES_AT_ONCE = 8;

const isConflict = (error: unknown) => isServiceError(error) && error.code === 'conflict';

/** Run `work` over `inputs`, at most `limit` at once, answers in input order. */
async function mapLimited<T, R>(inputs: T[], limit: number, work: (input: T) => Promise<R>): Promise<R[]> {
  const answers = new Array<R>(inputs.length);
  let next = 0;
  const lane = async () => {
    while (next < inputs.length) {
      const index = next++;
      answers[index] = await work(inputs[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, inputs.length) }, lane));
  return answers;
}

function matchesCondition(path: readonly string[], { matchType, path: pattern }: MatchCondition): boolean {
  if (pattern.length > path.length) return false;
  const start = matchType === 'prefix' ? 0 : path.length - pattern.length;
  return pattern.every((label, i) => label === '*' || label === path[start + i]);
}

/**
 * A LangGraph store over the Temporal Memory Service (`BaseStore` of `@langchain/langgraph`).
 *
 * A namespace tuple is a path of the workspace's namespaces from a root (created on first put);
 * an item is the memory holding the item's key in that namespace (decisions §12), its value the
 * memory's text as canonical JSON. A put of a held key is a correction, a delete a retraction:
 * the history is kept. `new TmsStore({ client, asOf })` reads what the store held at that time.
 */
export class TmsStore extends BaseStore {
  private readonly client: TmsClient;
  private readonly readAt: { as_of?: number; known_at?: number };
  private readonly pastRead: boolean;
  private readonly kind: Kind;
  private readonly mode: TmsStoreOptions['mode'];
  private readonly resolveSequences: boolean;
  private readonly namespaces: NamespaceDirectory;
  private readonly createdAt = new Map<string, Promise<number>>();
  private readonly sequences = new Map<string, Promise<number | null>>();
  /** The newest commit this store wrote: a query search waits for the index to hold it. */
  private lastWritten = 0;

  constructor(options: TmsStoreOptions) {
    super();
    this.client = options.client;
    const asOf = options.asOf ?? options.knownAt;
    const knownAt = options.knownAt ?? options.asOf;
    this.readAt = {
      ...(asOf === undefined ? {} : { as_of: asOf }),
      ...(knownAt === undefined ? {} : { known_at: knownAt }),
    };
    this.pastRead = asOf !== undefined;
    this.kind = options.kind ?? 'claim';
    this.mode = options.mode;
    this.resolveSequences = options.resolveSequences ?? true;
    this.namespaces = new NamespaceDirectory(options.client);
  }

  /**
   * Operations run in the order given and answer in that order: reads next to each other run
   * together, and so do writes of different keys; a read sees every write before it. The first
   * failure rejects the batch (LangGraph's batching rejects every operation of it).
   */
  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    for (const operation of operations) this.validate(operation);
    const results: unknown[] = new Array(operations.length).fill(undefined);
    let running: Promise<void>[] = [];
    let runningWrites: Set<string> | null = null;
    for (const [index, operation] of operations.entries()) {
      const writeKey = 'value' in operation ? pathKey([...operation.namespace, operation.key]) : null;
      const joins = writeKey === null ? runningWrites === null : runningWrites !== null && !runningWrites.has(writeKey);
      if (!joins && running.length > 0) {
        await Promise.all(running);
        running = [];
      }
      if (!joins || running.length === 0) runningWrites = writeKey === null ? null : new Set();
      if (writeKey !== null) runningWrites?.add(writeKey);
      running.push(
        this.execute(operation).then((result) => {
          results[index] = result;
        }),
      );
    }
    await Promise.all(running);
    return results as OperationResults<Op>;
  }

  /** Refuse what LangGraph's own stores refuse, before anything runs. */
  private validate(operation: Operation): void {
    if ('namespacePrefix' in operation) {
      if (operation.namespacePrefix.length > 0)
        validateNamespace(operation.namespacePrefix, { allowReservedRoot: true });
    } else if ('namespace' in operation) {
      validateNamespace(operation.namespace, { allowReservedRoot: true });
      if ('value' in operation) {
        if (this.pastRead) throw new Error('TmsStore: a store reading the past (asOf, knownAt) is read-only');
        if (operation.value !== null) valueText(operation.value);
      }
    } else if ('matchConditions' in operation) {
      for (const condition of operation.matchConditions ?? []) {
        validateNamespace(condition.path, { allowEmpty: true, allowReservedRoot: true });
      }
    } else {
      throw new TypeError(`TmsStore: unknown operation ${JSON.stringify(operation)}`);
    }
  }

  private execute(operation: Operation): Promise<unknown> {
    if ('namespacePrefix' in operation) return this.searchOperation(operation);
    if ('value' in operation) return this.putOperation(operation);
    if ('namespace' in operation) return this.getOperation(operation);
    return this.listNamespacesOperation(operation);
  }

  private async getOperation({ namespace, key }: GetOperation): Promise<TmsItem | null> {
    const namespaceId = await this.namespaces.find(namespace);
    if (namespaceId === null) return null;
    const held = await this.holder(namespaceId, key, this.readAt);
    return held ? this.toItem(held, namespace) : null;
  }

  /** The memory holding `key` in a namespace as read at `at` (the head when empty). */
  private async holder(namespaceId: string, key: string, at: { as_of?: number; known_at?: number }) {
    const { items } = await this.client.memories.list({ namespace_id: namespaceId, key, ...at, limit: 1 });
    return items[0] ?? null;
  }

  private async putOperation({ namespace, key, value }: PutOperation): Promise<void> {
    if (value === null) return this.retract(namespace, key);
    const text = valueText(value);
    const namespaceId = await this.namespaces.ensure(namespace);
    for (let attempt = 1; ; attempt += 1) {
      try {
        const current = await this.holder(namespaceId, key, {});
        const written = current
          ? await this.client.memories.correct({
              id: current.memory.id,
              expected_generation: current.memory.generation,
              text,
            })
          : await this.client.memories.create({ namespace_id: namespaceId, kind: this.kind, key, text, valid_from: 0 });
        if (written.commit) this.wrote(written.revision.id, written.commit.sequence);
        return;
      } catch (error) {
        // Another writer changed or created this key meanwhile: read it again and write over it.
        if (!isConflict(error) || attempt >= WRITE_ATTEMPTS) throw error;
        await pause();
      }
    }
  }

  private async retract(namespace: string[], key: string): Promise<void> {
    const namespaceId = await this.namespaces.find(namespace);
    if (namespaceId === null) return;
    for (let attempt = 1; ; attempt += 1) {
      const current = await this.holder(namespaceId, key, {});
      if (!current) return;
      try {
        const { commit } = await this.client.memories.forget({
          id: current.memory.id,
          mode: 'retract',
          expected_generation: current.memory.generation,
        });
        if (commit) this.lastWritten = Math.max(this.lastWritten, commit.sequence);
        return;
      } catch (error) {
        if (!isConflict(error) || attempt >= WRITE_ATTEMPTS) throw error;
        await pause();
      }
    }
  }

  private wrote(revisionId: string, sequence: number): void {
    this.sequences.set(revisionId, Promise.resolve(sequence));
    this.lastWritten = Math.max(this.lastWritten, sequence);
  }

  private async searchOperation(operation: SearchOperation): Promise<TmsSearchItem[]> {
    if ((operation.limit ?? 10) <= 0) return [];
    return operation.query === undefined || operation.query === ''
      ? this.listItems(operation)
      : this.recallItems(operation, operation.query);
  }

  /** A search without a query: the subtree's items, namespace by namespace, filtered, then paged. */
  private async listItems({ namespacePrefix, filter, limit = 10, offset = 0 }: SearchOperation) {
    const within = (await this.namespaces.list()).filter((namespace) =>
      namespacePrefix.every((label, i) => namespace.display_path[i] === label),
    );
    const found: Array<{ held: MemoryListItem; path: string[] }> = [];
    let skipped = 0;
    for (const namespace of within) {
      const listing = this.client.paginate('memories.list', { namespace_id: namespace.id, ...this.readAt, limit: 100 });
      for await (const held of listing) {
        if (held.memory.key === null || !matchesFilter(textValue(held.revision.text), filter)) continue;
        if (skipped < offset) skipped += 1;
        else found.push({ held, path: namespace.display_path });
        if (found.length >= limit) break;
      }
      if (found.length >= limit) break;
    }
    return Promise.all(found.map(({ held, path }) => this.toItem(held, path)));
  }

  /** A search with a query: recall over the subtree, the fused score as the item's score. */
  private async recallItems({ namespacePrefix, filter, limit = 10, offset = 0 }: SearchOperation, query: string) {
    if (offset + limit > RECALL_MAX_ITEMS) {
      throw new RangeError(
        `TmsStore: a search with a query ranks at most ${RECALL_MAX_ITEMS} items; offset + limit is ${offset + limit}`,
      );
    }
    const all = await this.namespaces.list();
    let namespaceIds: string[];
    if (namespacePrefix.length > 0) {
      const id = await this.namespaces.find(namespacePrefix);
      namespaceIds = id === null ? [] : [id];
    } else {
      // The tops of what the caller can read; recall includes what lies below them.
      const readable = new Set(all.map((namespace) => namespace.id));
      namespaceIds = all
        .filter((namespace) => namespace.parent_id === null || !readable.has(namespace.parent_id))
        .map((namespace) => namespace.id);
    }
    if (namespaceIds.length === 0) return [];
    const answer = await this.client.recall({
      namespace_ids: namespaceIds,
      query,
      include_descendants: true,
      budget: { max_items: filter ? RECALL_MAX_ITEMS : offset + limit },
      ...(this.mode ? { mode: this.mode } : {}),
      ...this.readAt,
      // Read your writes: wait for the index to hold this store's last write.
      ...(this.lastWritten > 0 && !this.pastRead
        ? { min_sequence: this.lastWritten, wait_ms: RECALL_MAX_WAIT_MS, on_pending: 'error' as const }
        : {}),
    });
    const ranked = answer.items.filter(
      (item) => item.memory.key !== null && matchesFilter(textValue(item.revision.text), filter),
    );
    const page = ranked.slice(offset, offset + limit);
    return Promise.all(
      page.map(async (found) => {
        const path =
          this.namespaces.pathOf(found.memory.namespace_id) ?? (await this.pathOf(found.memory.namespace_id));
        const item: TmsSearchItem = await this.toItem(found, path);
        item.score = found.score;
        item.ranks = found.ranks;
        item.recallStatus = answer.status;
        return item;
      }),
    );
  }

  private async pathOf(namespaceId: string): Promise<string[]> {
    const { namespace } = await this.client.namespaces.get({ id: namespaceId });
    return namespace.display_path;
  }

  /** Namespaces holding at least one item as this store reads, matched, cut to `maxDepth`, then paged. */
  private async listNamespacesOperation({ matchConditions, maxDepth, limit, offset }: ListNamespacesOperation) {
    const candidates = (await this.namespaces.list()).filter((namespace) =>
      (matchConditions ?? []).every((condition) => matchesCondition(namespace.display_path, condition)),
    );
    const holding = await mapLimited(candidates, PROBES_AT_ONCE, (namespace) => this.holdsItems(namespace.id));
    const paths: string[][] = [];
    const seen = new Set<string>();
    candidates.forEach((namespace, i) => {
      if (!holding[i]) return;
      const path = maxDepth === undefined ? namespace.display_path : namespace.display_path.slice(0, maxDepth);
      if (seen.has(pathKey(path))) return;
      seen.add(pathKey(path));
      paths.push(path);
    });
    return paths.slice(offset, offset + limit);
  }

  private async holdsItems(namespaceId: string): Promise<boolean> {
    const listing = this.client.paginate('memories.list', { namespace_id: namespaceId, ...this.readAt, limit: 100 });
    for await (const held of listing) if (held.memory.key !== null) return true;
    return false;
  }

  private async toItem(
    held: Pick<MemoryListItem, 'memory' | 'revision' | 'stale'>,
    namespace: string[],
  ): Promise<TmsItem> {
    const { memory, revision } = held;
    const [createdAt, sequence] = await Promise.all([
      this.createdAtOf(memory.id, memory.generation, revision.recorded_at),
      this.sequenceOf(revision.id),
    ]);
    return {
      namespace,
      key: memory.key as string,
      value: textValue(revision.text),
      createdAt: new Date(createdAt * 1000),
      updatedAt: new Date(revision.recorded_at * 1000),
      memoryId: memory.id,
      revisionId: revision.id,
      generation: revision.generation,
      kind: revision.kind,
      sequence,
      validFrom: revision.valid_from,
      validTo: revision.valid_to,
      recordedAt: revision.recorded_at,
      stale: held.stale,
    };
  }

  /** When the memory was created: the record time of its first revision. */
  private createdAtOf(memoryId: string, generation: number, recordedAt: number): Promise<number> {
    if (generation === 1) return Promise.resolve(recordedAt);
    let known = this.createdAt.get(memoryId);
    if (!known) {
      known = (async () => {
        let first = recordedAt;
        // Newest generation first: the last revision listed is the first one written.
        for await (const revision of this.client.paginate('memories.history', { id: memoryId, limit: 100 })) {
          first = revision.recorded_at;
        }
        return first;
      })();
      known.catch(() => this.createdAt.delete(memoryId));
      this.createdAt.set(memoryId, known);
    }
    return known;
  }

  /** The sequence of the commit that wrote a revision. */
  private sequenceOf(revisionId: string): Promise<number | null> {
    let known = this.sequences.get(revisionId);
    if (!known) {
      if (!this.resolveSequences) return Promise.resolve(null);
      known = this.client.ledger.proof({ id: revisionId }).then(
        (proof) => proof.sequence,
        (error: unknown) => {
          // A proof spans at most 10 000 commits (budget_exceeded) and needs a chained ledger (unavailable).
          if (isServiceError(error) && (error.code === 'budget_exceeded' || error.code === 'unavailable')) return null;
          throw error;
        },
      );
      known.catch(() => this.sequences.delete(revisionId));
      this.sequences.set(revisionId, known);
    }
    return known;
  }
}
