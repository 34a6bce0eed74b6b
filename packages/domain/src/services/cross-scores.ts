import type { CrossScores, RankedCandidate, SearchHit } from '@tms/search';

export type Arm = 'lexical' | 'semantic';

/** One page of an arm's search: `revisionIds` restricts it to those revisions (scoring the other arm's candidates). */
export type ArmSearch = (limit: number, offset: number, revisionIds?: readonly string[]) => Promise<SearchHit[]>;
export type ArmSearches = Record<Arm, ArmSearch>;

export const NO_CROSS_SCORES: CrossScores = { lexical: new Map(), semantic: new Map() };

/** What one arm's search gave for revisions asked by id: the ids asked, and the scores of those it found. */
interface AskedScores {
  asked: ReadonlySet<string>;
  scores: ReadonlyMap<string, number>;
}

const NOTHING_ASKED: AskedScores = { asked: new Set(), scores: new Map() };

/** The entries of `from` whose memory `other` does not list. */
function onlyIn<T extends { memoryId: string }>(from: readonly T[], other: readonly T[]): T[] {
  const listed = new Set(other.map((entry) => entry.memoryId));
  return from.filter((entry) => !listed.has(entry.memoryId));
}

const revisionIdsOf = (entries: readonly { revisionId: string }[]) => entries.map((entry) => entry.revisionId);

/**
 * Each arm's own scores for the candidates only the other arm ranked, so that the fusion sums
 * two real scores for every candidate rather than count a memory an arm ranked 41st as if it
 * matched nothing. Asked of both arms at once, by revision id, as soon as both arms' first pages
 * are in: while the ledger decides on those pages, not after (a round trip less on the path of
 * every hybrid recall). Candidates that only a refill brought, or whose approved revision is not
 * the one an index listed, are asked once the rankings are final. A failure leaves those
 * candidates at the arm's floor: both rankings are already in hand and stay valid.
 */
export class CrossScoring {
  private readonly firstPages: Partial<Record<Arm, readonly SearchHit[]>> = {};
  private early: Promise<Record<Arm, AskedScores>> | null = null;

  constructor(private readonly searches: ArmSearches) {}

  /** An arm's first page of hits, before the ledger's decision on it. */
  firstPage(arm: Arm, hits: readonly SearchHit[]): void {
    this.firstPages[arm] = hits;
    const { lexical, semantic } = this.firstPages;
    if (!lexical || !semantic || this.early) return;
    this.early = Promise.all([
      this.ask('lexical', revisionIdsOf(onlyIn(semantic, lexical))),
      this.ask('semantic', revisionIdsOf(onlyIn(lexical, semantic))),
    ]).then(([lexicalScores, semanticScores]) => ({ lexical: lexicalScores, semantic: semanticScores }));
  }

  /** Both arms' scores for the approved candidates (each arm's final ranking) only the other arm ranked, by memory. */
  async scores(ranked: Record<Arm, readonly RankedCandidate[]>): Promise<CrossScores> {
    const early = (await this.early) ?? { lexical: NOTHING_ASKED, semantic: NOTHING_ASKED };
    const scoresFor = async (arm: Arm, candidates: readonly RankedCandidate[]) => {
      const late = revisionIdsOf(candidates.filter((c) => !early[arm].asked.has(c.revisionId)));
      const more = late.length > 0 ? await this.ask(arm, late) : NOTHING_ASKED;
      const byMemory = new Map<string, number>();
      for (const c of candidates) {
        const score = early[arm].scores.get(c.revisionId) ?? more.scores.get(c.revisionId);
        if (score !== undefined) byMemory.set(c.memoryId, score);
      }
      return byMemory;
    };
    const [lexicalScores, semanticScores] = await Promise.all([
      scoresFor('lexical', onlyIn(ranked.semantic, ranked.lexical)),
      scoresFor('semantic', onlyIn(ranked.lexical, ranked.semantic)),
    ]);
    return { lexical: lexicalScores, semantic: semanticScores };
  }

  private async ask(arm: Arm, revisionIds: readonly string[]): Promise<AskedScores> {
    const asked = new Set(revisionIds);
    if (asked.size === 0) return NOTHING_ASKED;
    const hits = await this.searches[arm](asked.size, 0, [...asked]).catch((): SearchHit[] => []);
    return { asked, scores: new Map(hits.map((hit) => [hit.revisionId, hit.score])) };
  }
}
