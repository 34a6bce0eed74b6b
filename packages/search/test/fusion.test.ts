import { describe, expect, it } from 'vitest';
import { DEFAULT_FUSION, fuseRankings, type RankedCandidate, RRF_K } from '../src/fusion';

const hit = (id: string, score: number): RankedCandidate => ({ revisionId: `rev_${id}`, memoryId: `mem_${id}`, score });

// Lexical ranks a, b, c; semantic ranks c, d, a. b and d appear in one arm each.
const lexical = [hit('a', 9), hit('b', 5), hit('c', 1)];
const semantic = [hit('c', 0.9), hit('d', 0.8), hit('a', 0.1)];

describe('reciprocal rank fusion (k = 60)', () => {
  it('sums 1 / (60 + rank) over the arms, ties broken by the lexical rank, then the semantic rank', () => {
    expect(RRF_K).toBe(60);
    const fused = fuseRankings({ lexical, semantic }, 'rrf');
    // a: 1/61 + 1/63 and c: 1/63 + 1/61 tie; so do b (1/62) and d (1/62).
    expect(fused.map((f) => f.memoryId)).toEqual(['mem_a', 'mem_c', 'mem_b', 'mem_d']);
    expect(fused.map((f) => f.score)).toEqual([1 / 61 + 1 / 63, 1 / 63 + 1 / 61, 1 / 62, 1 / 62]);
    expect(fused.map((f) => f.ranks)).toEqual([
      { lexical: 1, semantic: 3 },
      { lexical: 3, semantic: 1 },
      { lexical: 2, semantic: null },
      { lexical: null, semantic: 2 },
    ]);
  });

  it('puts a memory both arms rank well above one only a single arm ranks first', () => {
    const fused = fuseRankings(
      { lexical: [hit('x', 3), hit('both', 2)], semantic: [hit('y', 0.9), hit('both', 0.8)] },
      'rrf',
    );
    expect(fused[0]).toMatchObject({ memoryId: 'mem_both', score: 2 / 62, ranks: { lexical: 2, semantic: 2 } });
    expect(fused.slice(1).map((f) => f.memoryId)).toEqual(['mem_x', 'mem_y']);
  });

  it('keeps one arm alone in its own order', () => {
    const fused = fuseRankings({ lexical: [], semantic }, 'rrf');
    expect(fused.map((f) => [f.memoryId, f.score, f.ranks.lexical, f.ranks.semantic])).toEqual([
      ['mem_c', 1 / 61, null, 1],
      ['mem_d', 1 / 62, null, 2],
      ['mem_a', 1 / 63, null, 3],
    ]);
  });
});

describe("weighted sum of scores scaled from each arm's floor to its best", () => {
  it('maps each arm to [0, 1] by its best score and sums them at weight 0.5 each', () => {
    const fused = fuseRankings({ lexical, semantic }, 'weighted');
    // lexical 9, 5, 1 -> 1, 5/9, 1/9; semantic 0.9, 0.8, 0.1 -> 1, 8/9, 1/9.
    // a = 0.5 + 0.5/9 and c = 0.5/9 + 0.5 tie (the lexical rank puts a first); d = 0.4/0.9; b = 2.5/9.
    expect(fused.map((f) => f.memoryId)).toEqual(['mem_a', 'mem_c', 'mem_d', 'mem_b']);
    const scores = fused.map((f) => f.score);
    expect(scores[0]).toBeCloseTo(0.5 + 0.5 / 9, 12);
    expect(scores[1]).toBeCloseTo(0.5 + 0.5 / 9, 12);
    expect(scores[2]).toBeCloseTo(0.4 / 0.9, 12);
    expect(scores[3]).toBeCloseTo(2.5 / 9, 12);
    expect(fused[2]?.ranks).toEqual({ lexical: null, semantic: 2 });
  });

  it("gives a memory the same share of an arm wherever that arm's list was cut", () => {
    const full = fuseRankings({ lexical: [hit('x', 8), hit('y', 4), hit('z', 2)], semantic: [] }, 'weighted');
    const cut = fuseRankings({ lexical: [hit('x', 8), hit('y', 4)], semantic: [] }, 'weighted');
    // Min-max over the list would give y 0.5 in the first and 0 in the second.
    expect(full.find((f) => f.memoryId === 'mem_y')?.score).toBe(0.25);
    expect(cut.find((f) => f.memoryId === 'mem_y')?.score).toBe(0.25);
  });

  it("counts the other arm's own score of a candidate it did not rank, when given", () => {
    const rankings = { lexical: [hit('p', 10), hit('q', 2)], semantic: [hit('r', 0.8), hit('q', 0.6)] };
    const without = fuseRankings(rankings, 'weighted');
    // p alone: 0.5; q: 0.5 * 0.2 + 0.5 * 0.75 = 0.475; r alone: 0.5.
    expect(without.map((f) => [f.memoryId, f.score])).toEqual([
      ['mem_p', 0.5],
      ['mem_r', 0.5],
      ['mem_q', 0.475],
    ]);
    // Asked, the semantic arm scores p 0.4 and the lexical arm scores r 0 (no query word): p rises above r.
    const crossScores = { lexical: new Map([['mem_r', 0]]), semantic: new Map([['mem_p', 0.4]]) };
    const completed = fuseRankings(rankings, 'weighted', crossScores);
    expect(completed.map((f) => [f.memoryId, f.score])).toEqual([
      ['mem_p', 0.75],
      ['mem_r', 0.5],
      ['mem_q', 0.475],
    ]);
    // Ranks still say where each arm placed a memory itself.
    expect(completed[0]?.ranks).toEqual({ lexical: 1, semantic: null });
  });

  it('counts scores below the floor as the floor, and above the best as the best', () => {
    const fused = fuseRankings({ lexical: [], semantic: [hit('near', 0.5), hit('opposite', -0.3)] }, 'weighted', {
      lexical: new Map(),
      semantic: new Map([['mem_far', 0.9]]),
    });
    expect(fused.map((f) => [f.memoryId, f.score])).toEqual([
      ['mem_near', 0.5],
      ['mem_opposite', 0],
    ]);
    const rescored = fuseRankings({ lexical: [hit('a', 1)], semantic: [hit('b', 0.5)] }, 'weighted', {
      lexical: new Map(),
      semantic: new Map([['mem_a', 0.6]]),
    });
    expect(rescored[0]).toMatchObject({ memoryId: 'mem_a', score: 1 });
  });

  it('counts every score as 1 when an arm has a single candidate or one score throughout', () => {
    const fused = fuseRankings({ lexical: [hit('z', 4), hit('y', 4)], semantic: [hit('y', 0.3)] }, 'weighted');
    expect(fused.map((f) => [f.memoryId, f.score])).toEqual([
      ['mem_y', 1],
      ['mem_z', 0.5],
    ]);
  });
});

describe('either fusion', () => {
  it.each(['rrf', 'weighted'] as const)(
    '%s: a memory listed twice in one arm keeps its first place there',
    (method) => {
      const stale = { revisionId: 'rev_a_old', memoryId: 'mem_a', score: 8 };
      const fused = fuseRankings({ lexical: [hit('a', 9), stale, hit('b', 1)], semantic: [] }, method);
      expect(fused.map((f) => [f.revisionId, f.ranks.lexical])).toEqual([
        ['rev_a', 1],
        ['rev_b', 2],
      ]);
    },
  );

  it.each(['rrf', 'weighted'] as const)("%s: equal scores go by the arms' ranks, never by the random ids", (method) => {
    const one = fuseRankings({ lexical: [hit('p', 1)], semantic: [hit('q', 1)] }, method);
    const other = fuseRankings({ lexical: [hit('q', 1)], semantic: [hit('p', 1)] }, method);
    // Both tie; the lexical arm's candidate comes first, whatever its revision id.
    expect(one.map((f) => f.revisionId)).toEqual(['rev_p', 'rev_q']);
    expect(other.map((f) => f.revisionId)).toEqual(['rev_q', 'rev_p']);
  });

  it('nothing in, nothing out; the default is one of the two', () => {
    expect(fuseRankings({ lexical: [], semantic: [] })).toEqual([]);
    expect(['rrf', 'weighted']).toContain(DEFAULT_FUSION);
  });
});
