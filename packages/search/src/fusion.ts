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

/** Weights of the weighted fusion (lexical, semantic); each arm's scores are min-max normalised first. */
export const FUSION_WEIGHTS = { lexical: 0.5, semantic: 0.5 } as const;

export interface Rankings {
  lexical: readonly RankedCandidate[];
  semantic: readonly RankedCandidate[];
}

type Arm = keyof Rankings;
const ARMS: readonly Arm[] = ['lexical', 'semantic'];

/**
 * Fuse two rankings. Candidates are identified by memory: a memory listed twice in one arm (two
 * revisions of it, from a lagging index) keeps its first place there. An empty arm contributes
 * nothing, so fusing one arm alone keeps that arm's order.
 */
export function fuseRankings(rankings: Rankings, method: FusionMethod = DEFAULT_FUSION): FusedCandidate[] {
  const fused = new Map<string, FusedCandidate>();
  for (const arm of ARMS) {
    const ranked = firstPerMemory(rankings[arm]);
    const contribution = method === 'rrf' ? rrfContributions(ranked.length) : minMaxContributions(ranked, arm);
    ranked.forEach((candidate, index) => {
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
      entry.ranks[arm] = index + 1;
      entry.score += contribution[index] ?? 0;
    });
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

/** RRF: rank r contributes 1 / (k + r). */
function rrfContributions(count: number): number[] {
  return Array.from({ length: count }, (_, index) => 1 / (RRF_K + index + 1));
}

/**
 * Weighted sum: each score mapped to [0, 1] by the arm's min and max, times the arm's weight. When
 * every score of an arm is equal (one candidate, or a tie throughout) each counts as 1.
 */
function minMaxContributions(ranked: readonly RankedCandidate[], arm: Arm): number[] {
  const scores = ranked.map((c) => c.score);
  const min = Math.min(...scores);
  const max = Math.max(...scores);
  const weight = FUSION_WEIGHTS[arm];
  return scores.map((score) => weight * (max > min ? (score - min) / (max - min) : 1));
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
