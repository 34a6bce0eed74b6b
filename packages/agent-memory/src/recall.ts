import type { RecallOutput } from '@tms/client';

export type RecallStatus = RecallOutput['status'];
export type RecallItem = RecallOutput['items'][number];

/** What each status means for the reader of an answer (docs/api.md, "Recall"). */
export const STATUS_NOTES: Record<RecallStatus, string> = {
  complete: 'complete: this is what the index holds for the query within the budget',
  partial:
    'partial: a budget cut the answer short, so more relevant memories may exist; an empty answer is no proof of absence',
  degraded:
    'degraded: a search arm was unavailable, so relevant memories may be missing; an empty answer is no proof of absence',
  pending:
    'pending: the index has not caught up with recent writes, so the newest memories may be missing; an empty answer is no proof of absence',
};

/** A time in Unix seconds as ISO 8601 (UTC). */
export function isoTime(seconds: number | null): string | null {
  return seconds === null ? null : new Date(seconds * 1000).toISOString();
}

/** One recalled item as a tool result shows it: flat, times in both forms, nothing the model cannot use. */
export function recalledItem(item: RecallItem) {
  return {
    memory_id: item.memory.id,
    generation: item.memory.generation,
    key: item.memory.key,
    kind: item.revision.kind,
    text: item.revision.text,
    score: item.score,
    stale: item.stale,
    valid_from: item.revision.valid_from,
    valid_to: item.revision.valid_to,
    recorded_at: item.revision.recorded_at,
  };
}

/** The answer as a tool result: its status said in words, then the items. */
export function recallResult(answer: RecallOutput) {
  return {
    status: answer.status,
    status_note: STATUS_NOTES[answer.status],
    items: answer.items.map(recalledItem),
  };
}

/** The items as lines for a prompt, headed by what the status means. */
export function formatRecall(query: string, answer: RecallOutput): string {
  const head =
    answer.items.length === 0
      ? `No memories were recalled for ${JSON.stringify(query)} (${STATUS_NOTES[answer.status]}).`
      : `Memories recalled for ${JSON.stringify(query)} (${STATUS_NOTES[answer.status]}):`;
  const lines = answer.items.map((item) => {
    const { revision } = item;
    const until = revision.valid_to === null ? '' : ` until ${isoTime(revision.valid_to)}`;
    const stale = item.stale ? ', stale: a memory it rests on has changed' : '';
    return `- [${item.memory.id}, ${revision.kind}, valid from ${isoTime(revision.valid_from)}${until}${stale}] ${revision.text}`;
  });
  return [head, ...lines].join('\n');
}
