import type { RecallOutput } from '@tms/client';
import { describe, expect, it } from 'vitest';
import { formatRecall, recallResult, STATUS_NOTES } from '../src/index';

/** An answer as recall gives it, for the formatting alone (the packages' tests take real ones from a gateway). */
function answer(status: RecallOutput['status'], texts: string[]): RecallOutput {
  return {
    status,
    indexed_sequence: 7,
    context_chars: texts.join('').length,
    retrieval: { mode: 'hybrid', lexical: 'ok', semantic: status === 'degraded' ? 'unavailable' : 'ok' },
    items: texts.map((text, i) => ({
      memory: { id: `mem_${i}`, namespace_id: 'ns_1', kind: 'claim', generation: 1, key: null },
      revision: {
        id: `rev_${i}`,
        memory_id: `mem_${i}`,
        namespace_id: 'ns_1',
        kind: 'claim',
        generation: 1,
        text,
        status: 'candidate',
        valid_from: 1700000000,
        valid_to: i === 1 ? 1800000000 : null,
        recorded_at: 1700000100,
        recorded_until: null,
        evidence_ids: [],
        support_revision_ids: [],
        attestation: null,
        invalidation: null,
      },
      score: 1 - i / 10,
      ranks: { lexical: i + 1, semantic: null },
      stale: i === 1,
    })),
  };
}

describe('recall for a model', () => {
  it('heads the items with what the status means, and says when an empty answer proves nothing', () => {
    for (const status of ['complete', 'partial', 'degraded', 'pending'] as const) {
      const text = formatRecall('tea', answer(status, ['Ana drinks tea.']));
      expect(text.split('\n')[0]).toBe(`Memories recalled for "tea" (${STATUS_NOTES[status]}):`);
      const empty = formatRecall('tea', answer(status, []));
      expect(empty).toBe(`No memories were recalled for "tea" (${STATUS_NOTES[status]}).`);
      expect(empty.includes('no proof of absence')).toBe(status !== 'complete');
    }
  });

  it('shows each item with its id, kind, valid time and staleness', () => {
    const lines = formatRecall('tea', answer('complete', ['Ana drinks tea.', 'Ana drank coffee.'])).split('\n');
    expect(lines.slice(1)).toEqual([
      '- [mem_0, claim, valid from 2023-11-14T22:13:20.000Z] Ana drinks tea.',
      '- [mem_1, claim, valid from 2023-11-14T22:13:20.000Z until 2027-01-15T08:00:00.000Z, stale: a memory it rests on has changed] Ana drank coffee.',
    ]);
    expect(recallResult(answer('partial', ['x']))).toEqual({
      status: 'partial',
      status_note: STATUS_NOTES.partial,
      items: [expect.objectContaining({ memory_id: 'mem_0', text: 'x', score: 1, valid_to: null })],
    });
  });
});
