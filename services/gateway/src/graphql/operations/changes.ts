import { changesList } from '@tms/catalog';
import { Deadline, DomainError, type NextCommit } from '@tms/domain';
import { builder } from '../builder';
import { type GraphQLContext, present, runOperation } from '../context';
import { type ChangePageModel, ChangePageRef } from '../refs';

/** A stream looks at the feed again at least this often, whatever the notifications say. */
export const STREAM_POLL_MS = 1000;
/**
 * A stream woken by commits reads at most this often: each batch is one `changes.list` call,
 * counted by the rate limiter, and under a steady write load every commit would wake it.
 */
export const STREAM_MIN_INTERVAL_MS = 250;
/** Commits read per batch of a stream (the most `changes.list` reads at once). */
const STREAM_BATCH = 100;

/** Wait `ms`, or less if `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

interface FeedQuery {
  after: number;
  namespace_id?: string;
  include_descendants?: boolean;
}

/** One batch of a stream: a page, or the error that ends the stream. */
type StreamEvent = ChangePageModel | Error;

/**
 * The batches of a subscription. Each batch authenticates the bearer token again and runs
 * `changes.list` with fresh standing under its own operation deadline, so a revoked
 * credential, grant or membership (each a commit that wakes the stream) ends the stream at
 * the next batch. Batches with nothing visible are not sent; an error is sent as the last
 * event. The stream holds a slot of `ctx.streams` until it ends or the client goes away.
 */
function changeStream(ctx: GraphQLContext, query: FeedQuery): AsyncIterableIterator<StreamEvent> {
  const acquired = ctx.streams.acquire();
  if (!acquired) throw new DomainError('unavailable', 'too many open change streams', 1);
  const release: () => void = acquired;
  const stop = new AbortController();

  async function readBatch(after: number): Promise<{ page: ChangePageModel; next: NextCommit | null }> {
    const deadline = new Deadline(ctx.timeoutMs);
    let next: NextCommit | null = null;
    try {
      const caller = await deadline.race(ctx.reauthenticate());
      const workspaceId = caller.boundWorkspaceId ?? ctx.selectedWorkspaceId;
      // Registered before the read, so that a commit landing during it wakes the next wait.
      if (workspaceId !== null) next = await ctx.domain.commitWatch.next(workspaceId);
      const page = await runOperation<ChangePageModel>({ ...ctx, caller, deadline }, changesList, {
        query: { ...query, after, limit: STREAM_BATCH },
      });
      return { page, next };
    } catch (error) {
      next?.cancel();
      throw error;
    } finally {
      deadline.clear();
    }
  }

  async function* batches(): AsyncGenerator<StreamEvent> {
    let after = query.after;
    try {
      while (!stop.signal.aborted) {
        let batch: Awaited<ReturnType<typeof readBatch>>;
        const readAt = performance.now();
        try {
          batch = await readBatch(after);
        } catch (error) {
          yield error instanceof Error ? error : new DomainError('internal');
          return;
        }
        const { page, next } = batch;
        after = page.next_after;
        if (page.changes.length > 0) yield page;
        if (page.next_after < page.head_sequence || next === null) {
          next?.cancel();
          continue;
        }
        await ctx.domain.commitWatch.within(next, STREAM_POLL_MS, stop.signal);
        const early = STREAM_MIN_INTERVAL_MS - (performance.now() - readAt);
        if (early > 0 && !stop.signal.aborted) await pause(early, stop.signal);
      }
    } finally {
      release();
    }
  }

  const iterator = batches();
  // `return` (the client went away) must end a stream that is waiting, not only one that yields.
  const end = () => {
    stop.abort();
    release();
  };
  return {
    next: () => iterator.next(),
    return: (value?: unknown) => {
      end();
      return iterator.return(value as StreamEvent);
    },
    throw: (error?: unknown) => {
      end();
      return iterator.throw(error);
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

builder.queryField('changes', (t) =>
  t.field({
    type: ChangePageRef,
    nullable: true,
    description:
      'The commits after `after` (default 0) with the ids they wrote, as far as the caller may read them, `first` (1-100, default 50) commits at most (`changes.list`).',
    args: {
      after: t.arg({ type: 'SafeInt' }),
      first: t.arg.int(),
      namespaceId: t.arg.id(),
      includeDescendants: t.arg.boolean(),
    },
    resolve: (_root, args, ctx) =>
      runOperation<ChangePageModel>(ctx, changesList, {
        query: present({
          after: args.after,
          limit: args.first,
          namespace_id: args.namespaceId,
          include_descendants: args.includeDescendants,
        }),
      }),
  }),
);

builder.subscriptionField('changes', (t) =>
  t.field({
    type: ChangePageRef,
    nullable: true,
    description:
      'The same changes as `changes`, streamed as they commit (server-sent events), from `after` on, in sequence order. Each event is a non-empty page; resume with its `nextAfter`. Access is checked again for every batch: when the caller may no longer read (a revoked credential, grant or membership) the stream ends with that error.',
    args: {
      after: t.arg({ type: 'SafeInt' }),
      namespaceId: t.arg.id(),
      includeDescendants: t.arg.boolean(),
    },
    subscribe: (_root, args, ctx) =>
      changeStream(ctx, {
        after: args.after ?? 0,
        ...(present({ namespace_id: args.namespaceId, include_descendants: args.includeDescendants }) as Omit<
          FeedQuery,
          'after'
        >),
      }),
    resolve: (event: StreamEvent) => {
      if (event instanceof Error) throw event;
      return event;
    },
  }),
);
