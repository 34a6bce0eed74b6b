import type { RankedCandidate, SearchHit } from '@tms/search';
import { describe, expect, it } from 'vitest';
import { type Arm, type ArmSearches, CrossScoring } from '../src/services/cross-scores';

/**
 * Two arms over a fixed table of scores (revision id -> score per arm), recording every call
 * asked by revision id: the searches recall hands to `CrossScoring`, without an index.
 */
function armsOver(table: Record<Arm, Record<string, number>>, failing: Arm[] = []) {
  const asked: { arm: Arm; revisionIds: string[] }[] = [];
  const search =
    (arm: Arm) =>
    async (_limit: number, _offset: number, revisionIds?: readonly string[]): Promise<SearchHit[]> => {
      asked.push({ arm, revisionIds: [...(revisionIds ?? [])] });
      if (failing.includes(arm)) throw new Error(`${arm} is down`);
      return (revisionIds ?? []).flatMap((revisionId) => {
        const score = table[arm][revisionId];
        return score === undefined ? [] : [{ revisionId, memoryId: memoryOf(revisionId), score }];
      });
    };
  const searches: ArmSearches = { lexical: search('lexical'), semantic: search('semantic') };
  return { searches, asked };
}

/** Revision `r_x1` belongs to memory `m_x` (the test's naming). */
const memoryOf = (revisionId: string) => `m_${revisionId.slice(2, -1)}`;
const hit = (revisionId: string, score: number): SearchHit => ({ revisionId, memoryId: memoryOf(revisionId), score });
const ranked = (revisionId: string, score: number): RankedCandidate => hit(revisionId, score);

const TABLE = {
  lexical: { r_a1: 9, r_b1: 7, r_c1: 2, r_d1: 1, r_e2: 4 },
  semantic: { r_a1: 0.9, r_b1: 0.3, r_c1: 0.8, r_d1: 0.7, r_e2: 0.6 },
};

describe('cross-scores between the arms of a hybrid recall', () => {
  it('asks each arm for the other arm’s first-page candidates as soon as both pages are in, and nothing more when the rankings keep them', async () => {
    const { searches, asked } = armsOver(TABLE);
    const scoring = new CrossScoring(searches);
    scoring.firstPage('lexical', [hit('r_a1', 9), hit('r_b1', 7)]);
    expect(asked).toEqual([]);
    scoring.firstPage('semantic', [hit('r_a1', 0.9), hit('r_c1', 0.8)]);
    // Asked before the rankings are final (while the ledger decides), each arm only for what it did not list.
    expect(asked).toEqual([
      { arm: 'lexical', revisionIds: ['r_c1'] },
      { arm: 'semantic', revisionIds: ['r_b1'] },
    ]);
    const scores = await scoring.scores({
      lexical: [ranked('r_a1', 9), ranked('r_b1', 7)],
      semantic: [ranked('r_a1', 0.9), ranked('r_c1', 0.8)],
    });
    expect(asked).toHaveLength(2);
    expect(Object.fromEntries(scores.lexical)).toEqual({ m_c: 2 });
    expect(Object.fromEntries(scores.semantic)).toEqual({ m_b: 0.3 });
  });

  it('asks afterwards for candidates only a refill brought, or whose approved revision the index did not list', async () => {
    const { searches, asked } = armsOver(TABLE);
    const scoring = new CrossScoring(searches);
    scoring.firstPage('lexical', [hit('r_a1', 9)]);
    // The index listed m_e's older revision; the ledger approved r_e2.
    scoring.firstPage('semantic', [hit('r_a1', 0.9), hit('r_e1', 0.6)]);
    const scores = await scoring.scores({
      lexical: [ranked('r_a1', 9)],
      // m_d came from the semantic arm's second page (its first page had a refused memory).
      semantic: [ranked('r_a1', 0.9), ranked('r_e2', 0.6), ranked('r_d1', 0.7)],
    });
    expect(asked).toEqual([
      { arm: 'lexical', revisionIds: ['r_e1'] },
      { arm: 'lexical', revisionIds: ['r_e2', 'r_d1'] },
    ]);
    expect(Object.fromEntries(scores.lexical)).toEqual({ m_e: 4, m_d: 1 });
    expect(scores.semantic.size).toBe(0);
  });

  it('leaves the candidates of an arm whose search fails at that arm’s floor, and keeps the other arm’s scores', async () => {
    const { searches } = armsOver(TABLE, ['semantic']);
    const scoring = new CrossScoring(searches);
    scoring.firstPage('lexical', [hit('r_a1', 9), hit('r_b1', 7)]);
    scoring.firstPage('semantic', [hit('r_c1', 0.8)]);
    const scores = await scoring.scores({
      lexical: [ranked('r_a1', 9), ranked('r_b1', 7)],
      semantic: [ranked('r_c1', 0.8)],
    });
    expect(Object.fromEntries(scores.lexical)).toEqual({ m_c: 2 });
    expect(scores.semantic.size).toBe(0);
  });

  it('asks everything once the rankings are final when an arm never reported its first page', async () => {
    const { searches, asked } = armsOver(TABLE);
    const scoring = new CrossScoring(searches);
    scoring.firstPage('lexical', [hit('r_a1', 9)]);
    const scores = await scoring.scores({ lexical: [ranked('r_a1', 9)], semantic: [ranked('r_c1', 0.8)] });
    expect(asked).toEqual([
      { arm: 'lexical', revisionIds: ['r_c1'] },
      { arm: 'semantic', revisionIds: ['r_a1'] },
    ]);
    expect(Object.fromEntries(scores.lexical)).toEqual({ m_c: 2 });
    expect(Object.fromEntries(scores.semantic)).toEqual({ m_a: 0.9 });
  });
});
