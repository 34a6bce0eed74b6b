import { codePointLength, type OperationInput, type OperationOutput, type recall } from '@tms/catalog';
import type { NamespaceRow, RevisionRow } from '@tms/ledger';
import {
  EmbedderUnavailableError,
  type FusedCandidate,
  fuseRankings,
  type RankedCandidate,
  type SearchHit,
  type SearchProvider,
  semanticCursorName,
} from '@tms/search';
import { type HandlerContext, requireAccess } from '../context';
import { DomainError } from '../errors';
import { presentRevision } from '../present';
import { currentRevision, isValidAt } from '../temporal';
import { type Arm, type ArmSearch, type ArmSearches, CrossScoring, NO_CROSS_SCORES } from './cross-scores';
import { presentMemory } from './memories';

type RecallInput = OperationInput<typeof recall>;
type RecallOutput = OperationOutput<typeof recall>;
type RecallItem = RecallOutput['items'][number];
type ArmState = RecallOutput['retrieval']['lexical'];

/** Index pages asked per arm and recall before giving up with `partial` (the refill budget). */
const REFILL_ROUNDS = 3;
const WAIT_POLL_MS = 50;
/** A waiting recall stops waiting this long before the request's deadline, to search and answer in time. */
const DEADLINE_MARGIN_MS = 1500;
/** The query's embedding is given up this long before the request's deadline. */
const EMBED_MARGIN_MS = 750;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What one arm gave: its ledger-approved candidates in its own order, and whether its refill budget ran out. */
interface ArmAnswer {
  state: ArmState;
  ranked: RankedCandidate[];
  /** The refill budget ran out before the arm had all the candidates it wanted. */
  ranOut: boolean;
}

const OFF: ArmAnswer = { state: 'off', ranked: [], ranOut: false };
const UNAVAILABLE: ArmAnswer = { state: 'unavailable', ranked: [], ranOut: false };

/**
 * Recall (decisions §5, §11). Each arm the mode asks for and the configuration enables (lexical:
 * the search provider; semantic: the embedder and the provider's vectors) proposes candidates,
 * both at once, with the filters inside the search; the ledger decides: every candidate is
 * re-read and kept only if the caller may read it and it is current at (as_of, known_at) and
 * unpurged, so a stale or lagging index can never leak content. Dropped candidates are refilled
 * from further pages of the same arm within a fixed budget; when that budget runs out the answer
 * says `partial`, never that nothing more exists. The approved rankings are then fused.
 */
export async function recallMemories(input: RecallInput, ctx: HandlerContext): Promise<RecallOutput> {
  const access = requireAccess(ctx);
  const ws = access.workspaceId;
  const provider = ctx.search;
  const providerName: SearchProvider['name'] = provider?.name ?? 'none';
  // SEARCH_PROVIDER=none: no index to ask at all, so both arms are unavailable and the ledger answers.
  const indexingOff = provider === null || providerName === 'none';
  const arms = armsToAsk(input.mode, ctx);
  // The query's embedding starts first: the model works in another process while the scope,
  // the cursors and the lexical arm are read here. It is cancelled when the recall stops
  // waiting for it (shortly before the deadline, or on leaving), so nothing stays queued.
  const embedding = arms.includes('semantic') && !indexingOff && ctx.queryVectors ? new QueryEmbedding(ctx) : null;
  try {
    return await recallWith(input, ctx, { ws, provider: indexingOff ? null : provider, providerName, arms, embedding });
  } finally {
    embedding?.leave();
  }
}

interface RecallPlan {
  ws: string;
  /** Null when no index can be asked (SEARCH_PROVIDER=none). */
  provider: SearchProvider | null;
  providerName: SearchProvider['name'];
  arms: Arm[];
  embedding: QueryEmbedding | null;
}

async function recallWith(input: RecallInput, ctx: HandlerContext, plan: RecallPlan): Promise<RecallOutput> {
  const { ws, provider, providerName, arms, embedding } = plan;
  const queryVector = embedding?.vectorFor(input.query) ?? null;
  // Settled here too, so that a refused scope leaves no unhandled rejection behind.
  queryVector?.catch(() => {});
  // Each asked arm's cursor; the semantic one is per model. A model not known yet (an openai
  // embedder that has not reached its endpoint) has embedded nothing: its cursor reads 0, so
  // `indexed_sequence` never counts a commit that arm cannot find (§11). Waiting cannot help an
  // arm in that state, so `wait_ms` waits only for the others.
  const model = ctx.queryVectors?.model() ?? null;
  const cursors = arms.map((arm) => ({
    name: arm === 'lexical' ? providerName : semanticCursorName(providerName, model),
    awaitable: arm === 'lexical' || model !== null,
  }));
  const readCursors = async () => {
    const sequences = await ctx.stores.indexState.indexedSequences(
      ws,
      cursors.map((c) => c.name),
    );
    const awaited = sequences.filter((_, i) => cursors[i]?.awaitable);
    return {
      indexed: Math.min(...sequences),
      awaited: Math.min(...awaited, Number.POSITIVE_INFINITY),
      lexical: sequences[arms.indexOf('lexical')],
    };
  };
  // The scope, the clock and the cursors do not depend on each other: read at once.
  const [namespaces, now, firstSequences] = await Promise.all([
    readableScope(ctx, input.namespace_ids, input.include_descendants),
    input.as_of === undefined || input.known_at === undefined ? ctx.now() : 0,
    readCursors(),
  ]);
  const asOf = input.as_of ?? now;
  const knownAt = input.known_at ?? now;
  let sequences = firstSequences;
  const behind = (sequence: number) => input.min_sequence !== undefined && (!provider || input.min_sequence > sequence);
  if (behind(sequences.awaited) && input.wait_ms > 0 && provider) {
    // Within the request's deadline, leaving time to search and answer (`pending` if still behind).
    const remaining = (ctx.deadline?.remainingMs() ?? Number.POSITIVE_INFINITY) - DEADLINE_MARGIN_MS;
    const deadline = Date.now() + Math.min(input.wait_ms, remaining);
    while (behind(sequences.awaited) && Date.now() < deadline) {
      await sleep(Math.min(WAIT_POLL_MS, Math.max(0, deadline - Date.now())));
      sequences = await readCursors();
    }
  }
  const indexed = sequences.indexed;
  const pending = behind(indexed);
  if (pending && input.on_pending === 'error') {
    throw new DomainError('projection_pending', 'min_sequence is beyond the indexed sequence', 1);
  }

  const wanted = input.budget.max_items;
  const allowed = new Set(namespaces.map((n) => n.id));
  const ledger = new LedgerDecisions(ctx, ws, allowed, asOf, knownAt);
  const filters = { workspaceId: ws, namespaceIds: [...allowed], kinds: input.kinds, asOf, knownAt };
  // Fusion looks past the first `max_items` of each arm: a memory both arms rank fairly well
  // belongs above one that only a single arm ranks first.
  const perArm = Math.min(200, wanted * 2);
  // The semantic arm's scope is opened now, while the query is being embedded, so that the
  // provider reads meanwhile what does not depend on the vector (see `semanticScope`).
  const semanticScope =
    provider && queryVector && model !== null ? provider.semanticScope({ ...filters, model }) : null;
  // Asked for both arms, the lexical arm is asked for the semantic arm's candidates too: its scope
  // is opened once, so that a provider can score it once for every page (see `lexicalScope`).
  const bothArms = arms.length === 2 && queryVector !== null;
  // With the cursor read above: an index rebuilt since answers `unavailable`, not as if it held it.
  const lexicalQuery = { ...filters, text: input.query, indexedSequence: sequences.lexical };
  const lexicalScope = provider && bothArms ? provider.lexicalScope(lexicalQuery) : null;
  const searches: ArmSearches | null = provider && {
    lexical: (limit, offset, revisionIds) =>
      lexicalScope
        ? lexicalScope.search({ limit, offset, revisionIds })
        : provider.search({ ...lexicalQuery, limit, offset, revisionIds }),
    semantic: async (limit, offset, revisionIds) => {
      if (!queryVector) throw new EmbedderUnavailableError('the semantic arm is off');
      const { model: vectorModel, vector } = await queryVector;
      const scope =
        semanticScope && vectorModel === model
          ? semanticScope
          : provider.semanticScope({ ...filters, model: vectorModel });
      return scope.search(vector, { limit, offset, revisionIds });
    },
  };

  const crossScoring = searches && bothArms ? new CrossScoring(searches) : null;
  const [lexical, semantic] = (await Promise.all(
    (['lexical', 'semantic'] as const).map(async (arm): Promise<ArmAnswer> => {
      if (!arms.includes(arm)) return OFF;
      if (!searches) return UNAVAILABLE;
      if (arm === 'semantic' && !queryVector) return OFF;
      // Whatever one arm's search throws (the provider down, an SQL error, the embedder), that
      // arm is `unavailable` and the other still answers (§11).
      try {
        return await rankArm(ledger, perArm, searches[arm], (hits) => crossScoring?.firstPage(arm, hits));
      } catch (error) {
        if (!(error instanceof EmbedderUnavailableError)) ctx.observer.recallArmFailed?.(arm, error);
        return UNAVAILABLE;
      }
    }),
  )) as [ArmAnswer, ArmAnswer];

  const answered = lexical.state === 'ok' || semantic.state === 'ok';
  const degraded = lexical.state === 'unavailable' || semantic.state === 'unavailable';
  let candidates: { fused: FusedCandidate; revision: RevisionRow }[];
  if (answered && searches) {
    const crossScores =
      crossScoring && lexical.state === 'ok' && semantic.state === 'ok'
        ? await crossScoring.scores({ lexical: lexical.ranked, semantic: semantic.ranked })
        : NO_CROSS_SCORES;
    candidates = fuseRankings(
      { lexical: lexical.ranked, semantic: semantic.ranked },
      ctx.settings.fusion,
      crossScores,
    ).flatMap((fused) => {
      const revision = ledger.approved(fused.memoryId);
      return revision ? [{ fused, revision }] : [];
    });
  } else {
    candidates = degraded ? await ledgerScan(ctx, input, filters, wanted) : [];
  }

  // At most `max_items`; the context budget is a hard ceiling: an item whose text does not fit is left out.
  const chosen: typeof candidates = [];
  let contextChars = 0;
  let cut = false;
  for (const candidate of candidates) {
    if (chosen.length === wanted) break;
    const chars = codePointLength(candidate.revision.text ?? '');
    if (contextChars + chars > input.budget.max_context_chars) {
      cut = true;
      continue;
    }
    contextChars += chars;
    chosen.push(candidate);
  }
  // Ranked candidates were read whole by the ledger's decision; the ledger scan's were not.
  const identities =
    answered && searches
      ? ledger.identities(chosen.map((c) => c.fused.memoryId))
      : await ctx.stores.memories.identitiesAt(
          ws,
          chosen.map((c) => c.fused.memoryId),
          knownAt,
        );
  const items: RecallItem[] = chosen.map(({ fused, revision }) => ({
    memory: presentMemory(
      {
        id: fused.memoryId,
        namespaceId: revision.namespaceId,
        kind: revision.kind,
        key: identities.get(fused.memoryId)?.key ?? null,
      },
      identities.get(fused.memoryId)?.generation ?? revision.generation,
    ),
    revision: presentRevision(revision, knownAt),
    score: fused.score,
    stale: revision.invalidatedAt !== null && revision.invalidatedAt <= knownAt,
    ranks: { lexical: fused.ranks.lexical, semantic: fused.ranks.semantic },
  }));
  const ranOut = lexical.ranOut || semantic.ranOut;
  const partial = cut || (answered && ranOut && items.length < wanted);
  const status = degraded ? 'degraded' : pending ? 'pending' : partial ? 'partial' : 'complete';
  ctx.observer.recall?.(status);
  return {
    status,
    indexed_sequence: indexed,
    items,
    context_chars: contextChars,
    retrieval: { mode: input.mode, lexical: lexical.state, semantic: semantic.state },
  };
}

/**
 * The query's embedding for one recall, given up (the semantic arm `unavailable`) shortly before
 * the request's deadline: an embedder still loading its model or busy must not cost the lexical
 * arm's answer. Giving up, or the recall ending first, cancels it.
 */
class QueryEmbedding {
  private readonly cancel = new AbortController();
  private readonly timer: NodeJS.Timeout | undefined;
  /** Set once the vector came (or failed): nothing is left to cancel. */
  private settled = false;

  constructor(private readonly ctx: HandlerContext) {
    const remaining = ctx.deadline?.remainingMs();
    if (remaining !== undefined) {
      this.timer = setTimeout(
        () => this.cancel.abort(new EmbedderUnavailableError('the query was not embedded in time')),
        Math.max(0, remaining - EMBED_MARGIN_MS),
      );
    }
  }

  vectorFor(query: string): Promise<{ model: string; vector: Float32Array }> {
    const vectors = this.ctx.queryVectors;
    if (!vectors) return Promise.reject(new EmbedderUnavailableError('the semantic arm is off'));
    const vector = vectors.vectorFor(query, this.cancel.signal);
    const done = () => {
      this.settled = true;
    };
    vector.then(done, done);
    return vector;
  }

  leave(): void {
    clearTimeout(this.timer);
    // Most recalls leave with their vector in hand: an abort (an event and an error) only when one is still coming.
    if (!this.settled) this.cancel.abort(new EmbedderUnavailableError('the recall ended'));
  }
}

/**
 * The arms a recall asks: those its mode names that the configuration enables. When that leaves
 * none (`semantic` with EMBEDDER=none) the lexical arm answers alone and `retrieval` says so:
 * an empty answer would read as a claim that nothing matches.
 */
function armsToAsk(mode: RecallInput['mode'], ctx: HandlerContext): Arm[] {
  const semanticOn = ctx.queryVectors !== null;
  const named: Arm[] = mode === 'hybrid' ? ['lexical', 'semantic'] : [mode];
  const enabled = named.filter((arm) => arm === 'lexical' || semanticOn);
  return enabled.length > 0 ? enabled : ['lexical'];
}

/**
 * One arm's ranking, ledger-approved: pages of `perArm` hits (the first also handed to
 * `onFirstPage` before the ledger decides on it) until `perArm` candidates are
 * approved, the arm has no more, or the refill budget is spent. Ranks count approved candidates
 * only, so a candidate the ledger refused leaves no gap that would hint at it.
 */
async function rankArm(
  ledger: LedgerDecisions,
  perArm: number,
  page: ArmSearch,
  onFirstPage: (hits: readonly SearchHit[]) => void,
): Promise<ArmAnswer> {
  const ranked: RankedCandidate[] = [];
  const taken = new Set<string>();
  let exhausted = false;
  for (let round = 0, offset = 0; round < REFILL_ROUNDS && ranked.length < perArm && !exhausted; round += 1) {
    const hits = await page(perArm, offset);
    if (round === 0) onFirstPage(hits);
    offset += hits.length;
    exhausted = hits.length < perArm;
    await ledger.decide(hits.map((h) => h.memoryId));
    for (const hit of hits) {
      const revision = ledger.approved(hit.memoryId);
      if (!revision || taken.has(hit.memoryId) || ranked.length >= perArm) continue;
      taken.add(hit.memoryId);
      ranked.push({ revisionId: revision.id, memoryId: hit.memoryId, score: hit.score });
    }
  }
  return { state: 'ok', ranked, ranOut: !exhausted && ranked.length < perArm };
}

/** What the ledger alone can give when no arm answers: an exact-bytes scan of current revisions. */
async function ledgerScan(
  ctx: HandlerContext,
  input: RecallInput,
  filters: { workspaceId: string; namespaceIds: string[]; asOf: number; knownAt: number },
  wanted: number,
): Promise<{ fused: FusedCandidate; revision: RevisionRow }[]> {
  const rows = await ctx.stores.memories.scanText(filters.workspaceId, {
    namespaceIds: filters.namespaceIds,
    kinds: input.kinds,
    terms: ledgerTerms(input.query),
    asOf: filters.asOf,
    knownAt: filters.knownAt,
    limit: wanted,
  });
  const seen = new Set<string>();
  const found: { fused: FusedCandidate; revision: RevisionRow }[] = [];
  for (const row of rows) {
    if (seen.has(row.memoryId)) continue;
    seen.add(row.memoryId);
    found.push({
      fused: { revisionId: row.id, memoryId: row.memoryId, score: 0, ranks: { lexical: null, semantic: null } },
      revision: row,
    });
  }
  return found;
}

/**
 * The ledger's verdict on candidate memories, shared by both arms of one recall so that a memory
 * both propose is read once: its revision current at knownAt, valid at asOf, unpurged, in scope.
 */
class LedgerDecisions {
  /** Per memory: its approved revision, or null; a promise while its read is under way (the other arm may share it). */
  private readonly decided = new Map<string, Promise<RevisionRow | null>>();
  private readonly settled = new Map<string, RevisionRow | null>();
  /** Per memory read: its highest generation recorded by knownAt, and its key (as `identitiesAt` gives them). */
  private readonly identityOf = new Map<string, { generation: number; key: string | null }>();

  constructor(
    private readonly ctx: HandlerContext,
    private readonly workspaceId: string,
    private readonly allowed: Set<string>,
    private readonly asOf: number,
    private readonly knownAt: number,
  ) {}

  /** The verdict on a memory `decide` has settled (null: refused, or never asked). */
  approved(memoryId: string): RevisionRow | null {
    return this.settled.get(memoryId) ?? null;
  }

  /** Settle the verdict on each memory, reading from the ledger only those no arm asked about yet. */
  async decide(memoryIds: readonly string[]): Promise<void> {
    const fresh = [...new Set(memoryIds)].filter((id) => !this.decided.has(id));
    if (fresh.length > 0) {
      const read = this.read(fresh);
      for (const id of fresh)
        this.decided.set(
          id,
          read.then((verdicts) => verdicts.get(id) ?? null),
        );
    }
    await Promise.all(
      memoryIds.map(async (id) => {
        this.settled.set(id, (await this.decided.get(id)) ?? null);
      }),
    );
  }

  /** The generation and key of memories `decide` read (absent: never read, or unknown at knownAt). */
  identities(memoryIds: readonly string[]): Map<string, { generation: number; key: string | null }> {
    return new Map(
      memoryIds.flatMap((id) => {
        const identity = this.identityOf.get(id);
        return identity ? [[id, identity] as const] : [];
      }),
    );
  }

  private async read(memoryIds: readonly string[]): Promise<Map<string, RevisionRow>> {
    const rows = await this.ctx.stores.memories.revisionsWithKeys(this.workspaceId, memoryIds);
    const byMemory = new Map<string, RevisionRow[]>();
    const keyOf = new Map<string, string | null>();
    for (const { revision, key } of rows) {
      byMemory.set(revision.memoryId, [...(byMemory.get(revision.memoryId) ?? []), revision]);
      keyOf.set(revision.memoryId, key);
    }
    const verdicts = new Map<string, RevisionRow>();
    for (const [memoryId, revisions] of byMemory) {
      const known = revisions.filter((r) => r.recordedAt <= this.knownAt).sort((a, b) => b.generation - a.generation);
      const newest = known[0];
      if (newest) this.identityOf.set(memoryId, { generation: newest.generation, key: keyOf.get(memoryId) ?? null });
      const current = currentRevision(known, this.knownAt);
      if (!current || current.purgedAt !== null || current.text === null) continue;
      if (!this.allowed.has(current.namespaceId) || !isValidAt(current, this.asOf)) continue;
      verdicts.set(memoryId, current);
    }
    return verdicts;
  }
}

/** The addressed namespaces (each must be readable: `not_found` otherwise) and, if asked, their readable subtrees. */
async function readableScope(ctx: HandlerContext, ids: readonly string[], withDescendants: boolean) {
  const access = requireAccess(ctx);
  const roots: NamespaceRow[] = [];
  for (const id of ids) roots.push(await access.requireById(id, 'read'));
  if (!withDescendants) return roots;
  const below = await access.descendantsOf(ids);
  const readable = [];
  for (const namespace of below) if (await access.canRead(namespace)) readable.push(namespace);
  return [...roots, ...readable];
}

/** Query words for the byte-exact ledger scan: as typed, lowercase, capitalized and uppercase. */
function ledgerTerms(query: string): string[] {
  const typed = (query.match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, 16);
  const variants = typed.flatMap((w) => {
    const lower = w.toLowerCase();
    return [w, lower, lower.charAt(0).toUpperCase() + lower.slice(1), w.toUpperCase()];
  });
  return [...new Set(variants)].slice(0, 64);
}
