import { codePointLength, type OperationInput, type OperationOutput, type recall } from '@tms/catalog';
import type { NamespaceRow, RevisionRow } from '@tms/ledger';
import { SearchUnavailableError } from '@tms/search';
import { type HandlerContext, requireAccess } from '../context';
import { DomainError } from '../errors';
import { presentRevision } from '../present';
import { currentRevision, isValidAt } from '../temporal';
import { presentMemory } from './memories';

type RecallOutput = OperationOutput<typeof recall>;
type RecallItem = RecallOutput['items'][number];

/** Index pages asked per recall before giving up with `partial` (the refill budget). */
const REFILL_ROUNDS = 3;
const WAIT_POLL_MS = 50;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Recall (decisions §5). The index proposes candidates; the ledger decides: every candidate
 * is re-read and kept only if the caller may read it and it is current at (as_of, known_at)
 * and unpurged, so a stale or lagging index can never leak content. Dropped candidates are
 * refilled from further index pages within a fixed budget; when that budget runs out the
 * answer says `partial`, never that nothing more exists.
 */
export async function recallMemories(input: OperationInput<typeof recall>, ctx: HandlerContext): Promise<RecallOutput> {
  const access = requireAccess(ctx);
  const ws = access.workspaceId;
  const namespaces = await readableScope(ctx, input.namespace_ids, input.include_descendants);
  const now = input.as_of === undefined || input.known_at === undefined ? await ctx.now() : 0;
  const asOf = input.as_of ?? now;
  const knownAt = input.known_at ?? now;
  const providerName = ctx.search?.name ?? 'none';
  const indexingOff = ctx.search === null || providerName === 'none';

  let indexed = await ctx.stores.indexState.indexedSequence(ws, providerName);
  const behind = () => input.min_sequence !== undefined && (indexingOff || input.min_sequence > indexed);
  if (behind() && input.wait_ms > 0 && !indexingOff) {
    const deadline = Date.now() + input.wait_ms;
    while (behind() && Date.now() < deadline) {
      await sleep(Math.min(WAIT_POLL_MS, Math.max(0, deadline - Date.now())));
      indexed = await ctx.stores.indexState.indexedSequence(ws, providerName);
    }
  }
  const pending = behind();
  if (pending && input.on_pending === 'error') {
    throw new DomainError('projection_pending', 'min_sequence is beyond the indexed sequence', 1);
  }

  const wanted = input.budget.max_items;
  const allowed = new Set(namespaces.map((n) => n.id));
  const accepted = new Map<string, { revision: RevisionRow; score: number }>();
  let degraded = indexingOff;
  let exhausted = false;

  if (!indexingOff && ctx.search) {
    const pageSize = Math.min(200, wanted * 2);
    try {
      for (let round = 0, offset = 0; round < REFILL_ROUNDS && accepted.size < wanted && !exhausted; round += 1) {
        const hits = await ctx.search.search({
          workspaceId: ws,
          text: input.query,
          namespaceIds: [...allowed],
          kinds: input.kinds,
          asOf,
          knownAt,
          limit: pageSize,
          offset,
        });
        offset += hits.length;
        exhausted = hits.length < pageSize;
        const fresh = [...new Set(hits.map((h) => h.memoryId))].filter((id) => !accepted.has(id));
        const decided = await decideInLedger(ctx, ws, fresh, allowed, asOf, knownAt);
        for (const hit of hits) {
          const revision = decided.get(hit.memoryId);
          if (revision && !accepted.has(hit.memoryId) && accepted.size < wanted) {
            accepted.set(hit.memoryId, { revision, score: hit.score });
          }
        }
      }
    } catch (error) {
      if (!(error instanceof SearchUnavailableError)) throw error;
      degraded = true;
    }
  }
  if (degraded) {
    // What the ledger alone can give: an exact-bytes scan of current revisions.
    const rows = await ctx.stores.memories.scanText(ws, {
      namespaceIds: [...allowed],
      kinds: input.kinds,
      terms: ledgerTerms(input.query),
      asOf,
      knownAt,
      limit: wanted,
    });
    for (const row of rows) if (!accepted.has(row.memoryId)) accepted.set(row.memoryId, { revision: row, score: 0 });
  }

  // The context budget is a hard ceiling: an item whose text does not fit is left out.
  const generations = await ctx.stores.memories.generationsAt(ws, [...accepted.keys()], knownAt);
  const items: RecallItem[] = [];
  let contextChars = 0;
  let cut = false;
  for (const [memoryId, { revision, score }] of accepted) {
    const chars = codePointLength(revision.text ?? '');
    if (contextChars + chars > input.budget.max_context_chars) {
      cut = true;
      continue;
    }
    contextChars += chars;
    items.push({
      memory: presentMemory(
        { id: memoryId, namespaceId: revision.namespaceId, kind: revision.kind },
        generations.get(memoryId) ?? revision.generation,
      ),
      revision: presentRevision(revision, knownAt),
      score,
      stale: revision.invalidatedAt !== null && revision.invalidatedAt <= knownAt,
    });
  }
  const partial = cut || (!degraded && !exhausted && accepted.size < wanted);
  const status = degraded ? 'degraded' : pending ? 'pending' : partial ? 'partial' : 'complete';
  ctx.observer.recall?.(status);
  return { status, indexed_sequence: indexed, items, context_chars: contextChars };
}

/** The addressed namespaces (each must be readable: `not_found` otherwise) and, if asked, their readable subtrees. */
async function readableScope(ctx: HandlerContext, ids: readonly string[], withDescendants: boolean) {
  const access = requireAccess(ctx);
  const roots: NamespaceRow[] = [];
  for (const id of ids) roots.push(await access.requireById(id, 'read'));
  if (!withDescendants) return roots;
  const below = await ctx.stores.namespaces.descendantsOf(access.workspaceId, ids);
  const readable = [];
  for (const namespace of below) if (await access.canRead(namespace)) readable.push(namespace);
  return [...roots, ...readable];
}

/** For each memory, its revision current at knownAt, valid at asOf, unpurged, in scope; else absent. */
async function decideInLedger(
  ctx: HandlerContext,
  workspaceId: string,
  memoryIds: readonly string[],
  allowed: Set<string>,
  asOf: number,
  knownAt: number,
): Promise<Map<string, RevisionRow>> {
  const rows = await ctx.stores.memories.revisionsOfMemories(workspaceId, memoryIds);
  const byMemory = new Map<string, RevisionRow[]>();
  for (const row of rows) byMemory.set(row.memoryId, [...(byMemory.get(row.memoryId) ?? []), row]);
  const decided = new Map<string, RevisionRow>();
  for (const [memoryId, revisions] of byMemory) {
    const known = revisions.filter((r) => r.recordedAt <= knownAt).sort((a, b) => b.generation - a.generation);
    const current = currentRevision(known, knownAt);
    if (!current || current.purgedAt !== null || current.text === null) continue;
    if (!allowed.has(current.namespaceId) || !isValidAt(current, asOf)) continue;
    decided.set(memoryId, current);
  }
  return decided;
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
