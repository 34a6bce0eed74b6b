/**
 * Fusing recall's two rankings (decisions §11) into one order. Pure functions: the same two
 * rankings always give the same fused order, ties broken by revision id.
 */

/** One candidate in one arm's ranking, best first. */
export interface RankedCandidate {
  revisionId: string;
  memoryId: string;
  /** The arm's own score (BM25-like for lexical, cosine similarity for semantic); higher is better. */
  score: number;
}

export interface FusedCandidate {
  revisionId: string;
  memoryId: string;
  /** The fused score: higher is better, comparable only within one fusion. */
  score: number;
  /** 1-based rank in each arm's ranking, or null when that arm did not propose the candidate. */
  ranks: { lexical: number | null; semantic: number | null };
}

export type FusionMethod = 'rrf' | 'weighted';

/**
 * The fusion recall uses. One constant so that the quality benchmark (`pnpm bench:recall`)
 * decides it: switch it and rerun the benchmark.
 */
export const DEFAULT_FUSION: FusionMethod = 'weighted';

/** Reciprocal rank fusion's damping constant (Cormack et al.: 60 works across collections). */
export const RRF_K = 60;

/** Weights of the weighted fusion (lexical, semantic); each arm's scores are scaled to [0, 1] first (see `armScale`). */
export const FUSION_WEIGHTS = { lexical: 0.5, semantic: 0.5 } as const;

export interface Rankings {
  lexical: readonly RankedCandidate[];
  semantic: readonly RankedCandidate[];
}

/**
 * Per arm, the scores it gave on request to candidates it did not rank itself (by memory id):
 * the weighted fusion then sums both arms' real scores for every candidate, instead of counting
 * a memory one arm missed as that arm's worst. A candidate absent here and from the arm's
 * ranking scores that arm's floor (nothing matched).
 */
export interface CrossScores {
  lexical: ReadonlyMap<string, number>;
  semantic: ReadonlyMap<string, number>;
}

type Arm = keyof Rankings;
const ARMS: readonly Arm[] = ['lexical', 'semantic'];
const NO_CROSS_SCORES: CrossScores = { lexical: new Map(), semantic: new Map() };

/**
 * Fuse two rankings. Candidates are identified by memory: a memory listed twice in one arm (two
 * revisions of it, from a lagging index) keeps its first place there. An empty arm contributes
 * nothing, so fusing one arm alone keeps that arm's order.
 */
export function fuseRankings(
  rankings: Rankings,
  method: FusionMethod = DEFAULT_FUSION,
  crossScores: CrossScores = NO_CROSS_SCORES,
): FusedCandidate[] {
  const fused = new Map<string, FusedCandidate>();
  const entryFor = (candidate: RankedCandidate) => {
    let entry = fused.get(candidate.memoryId);
    if (!entry) {
      entry = {
        revisionId: candidate.revisionId,
        memoryId: candidate.memoryId,
        score: 0,
        ranks: { lexical: null, semantic: null },
      };
      fused.set(candidate.memoryId, entry);
    }
    return entry;
  };
  const ranked = { lexical: firstPerMemory(rankings.lexical), semantic: firstPerMemory(rankings.semantic) };
  for (const arm of ARMS) {
    ranked[arm].forEach((candidate, index) => {
      entryFor(candidate).ranks[arm] = index + 1;
    });
  }
  for (const arm of ARMS) {
    if (method === 'rrf') {
      ranked[arm].forEach((candidate, index) => {
        entryFor(candidate).score += 1 / (RRF_K + index + 1);
      });
      continue;
    }
    const scale = armScale(arm, ranked[arm]);
    const own = new Map(ranked[arm].map((candidate) => [candidate.memoryId, candidate.score]));
    for (const entry of fused.values()) {
      const score = own.get(entry.memoryId) ?? crossScores[arm].get(entry.memoryId);
      if (score !== undefined) entry.score += scale(score);
    }
  }
  return [...fused.values()].sort(byScoreThenRanks);
}

/** Each arm's candidate order as the arm gave it, a memory kept at its first place only. */
function firstPerMemory(ranking: readonly RankedCandidate[]): RankedCandidate[] {
  const seen = new Set<string>();
  const kept: RankedCandidate[] = [];
  for (const candidate of ranking) {
    if (seen.has(candidate.memoryId)) continue;
    seen.add(candidate.memoryId);
    kept.push(candidate);
  }
  return kept;
}

/**
 * The weighted fusion's scale of one arm: a score mapped to [0, 1] from the arm's floor (0: BM25
 * when no query term occurs, a cosine at or below orthogonal, Meilisearch's lowest ranking
 * score) to the arm's best score in scope (its first candidate: an arm ranks best first), times
 * the arm's weight. Neither end depends on where the arm's list was cut, so a memory keeps its
 * scaled score whether it ranked 3rd or 40th; scores below the floor count as the floor, above
 * the best (an exact rescore of an approximate list) as the best. An arm with nothing above its
 * floor contributes nothing.
 */
function armScale(arm: Arm, ranked: readonly RankedCandidate[]): (score: number) => number {
  const best = Math.max(0, ...ranked.map((candidate) => candidate.score));
  const weight = FUSION_WEIGHTS[arm];
  if (best === 0) return () => 0;
  return (score) => weight * Math.min(1, Math.max(0, score) / best);
}

/**
 * Higher fused score first; equal scores (RRF gives one to a memory at rank r of either arm alone)
 * by the lexical rank, then the semantic rank (absent last): the arms' own orders are
 * deterministic, so the fused order is too. Revision ids (random) only part what nothing else does.
 */
function byScoreThenRanks(a: FusedCandidate, b: FusedCandidate): number {
  if (a.score !== b.score) return b.score - a.score;
  for (const arm of ARMS) {
    const ra = a.ranks[arm] ?? Number.POSITIVE_INFINITY;
    const rb = b.ranks[arm] ?? Number.POSITIVE_INFINITY;
    if (ra !== rb) return ra - rb;
  }
  return a.revisionId < b.revisionId ? -1 : a.revisionId > b.revisionId ? 1 : 0;
}
