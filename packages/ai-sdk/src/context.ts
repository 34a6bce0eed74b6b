import { formatRecall, recallResult } from '@tms/agent-memory';
import type { RecallOutput, TmsClient } from '@tms/client';

export interface RecallContextOptions {
  /** A `@tms/client` client bound to a workspace. */
  client: TmsClient;
  /** The namespaces to recall from (with those below them). */
  namespaceIds: string[];
  query: string;
  /** At most this many memories (1-100). Default 10. */
  maxItems?: number;
  /** `hybrid` (default), `lexical` or `semantic`. */
  mode?: 'hybrid' | 'lexical' | 'semantic';
  /** What held at this time (Unix seconds); default now. */
  asOf?: number;
  /** As the service knew it at this time (Unix seconds); default now. */
  knownAt?: number;
  /** Wait (up to 10 s) for the index to hold this commit, e.g. a write's `commit.sequence`. */
  minSequence?: number;
}

export interface RecallContext {
  /** The memories as lines for a prompt, headed by what the answer's status means. */
  text: string;
  status: RecallOutput['status'];
  /** The recalled memories, as the recall tool shows them. */
  items: ReturnType<typeof recallResult>['items'];
  /** The service's answer as it came. */
  answer: RecallOutput;
}

/** Recall for a prompt: the items formatted, the answer's status said in words (never a silent gap). */
export async function recallContext(options: RecallContextOptions): Promise<RecallContext> {
  const answer = await options.client.recall({
    namespace_ids: options.namespaceIds,
    query: options.query,
    budget: { max_items: options.maxItems ?? 10 },
    ...(options.mode ? { mode: options.mode } : {}),
    ...(options.asOf === undefined ? {} : { as_of: options.asOf }),
    ...(options.knownAt === undefined ? {} : { known_at: options.knownAt }),
    ...(options.minSequence === undefined ? {} : { min_sequence: options.minSequence, wait_ms: 10_000 }),
  });
  return {
    text: formatRecall(options.query, answer),
    status: answer.status,
    items: recallResult(answer).items,
    answer,
  };
}
