import type { changesList, OperationInput, OperationOutput } from '@tms/catalog';
import type { ChangeQuery } from '@tms/ledger';
import { type HandlerContext, requireAccess } from '../context';
import { presentChange } from '../present';

/** A long poll looks again at least this often, in case a commit notification was lost. */
export const CHANGES_POLL_MS = 1000;
/** A long poll stops waiting this long before the request's deadline, to answer in time. */
const DEADLINE_MARGIN_MS = 500;

/**
 * The change feed (decisions §10). Subjects are kept only in namespaces the caller may read
 * (the same reach `namespaces.list` uses), workspace-level ones only for workspace admins; a
 * change with nothing left is skipped while `next_after` moves past it. An unreadable
 * `namespace_id` is `not_found` like an absent one. With `wait_ms` and no commit after
 * `after` yet, the answer waits for one (woken by the commit notification, looking again every
 * second regardless), within the request's deadline.
 */
export async function listChanges(
  input: OperationInput<typeof changesList>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof changesList>> {
  const access = requireAccess(ctx);
  if (input.namespace_id !== undefined) await access.requireById(input.namespace_id, 'read');
  const query: ChangeQuery = {
    after: input.after,
    limit: input.limit,
    namespaceId: input.namespace_id,
    includeDescendants: input.include_descendants,
    visibility: await access.readableVisibility(),
    workspaceSubjects: access.isAdmin,
  };
  const feed = ctx.stores.changes;
  const watch = ctx.commitWatch;
  const until =
    performance.now() + Math.min(input.wait_ms, (ctx.deadline?.remainingMs() ?? Infinity) - DEADLINE_MARGIN_MS);
  // Registered before each look, so that a commit landing in between is not waited past.
  let next = input.wait_ms > 0 ? await watch.next(access.workspaceId) : null;
  let page = await feed.listAfter(access.workspaceId, query);
  while (next && page.changes.length === 0 && performance.now() < until) {
    await watch.within(next, Math.min(CHANGES_POLL_MS, until - performance.now()), ctx.deadline?.signal);
    if (ctx.deadline?.passed) break;
    next = await watch.next(access.workspaceId);
    page = await feed.listAfter(access.workspaceId, query);
  }
  next?.cancel();
  return {
    changes: page.changes.filter((change) => change.subjects.length > 0).map(presentChange),
    next_after: page.changes.at(-1)?.sequence ?? input.after,
    head_sequence: page.headSequence,
  };
}
