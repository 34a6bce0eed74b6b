import type { Operation } from '@tms/catalog';
import type { ChainedCommit, CommitStamp, Stores } from '@tms/ledger';
import type { HandlerContext } from './context';
import type { CursorCodec } from './cursor';
import type { RequestMeta } from './request';
import { nowSeconds } from './temporal';
import { type StandingLoad, workspaceAccessFor } from './workspace-resolution';

/** What the domain lends every handler, the same for every request. */
export type DomainServices = Pick<
  HandlerContext,
  'search' | 'queryVectors' | 'commitWatch' | 'ledgerKey' | 'settings' | 'observer'
>;

/** A grouped write's commit point: the group committer allocates and records the commit. */
export type GroupCommitPoint = (workspaceId: string, subjectIds: string[]) => Promise<CommitStamp>;

/** An operation's request as validated, and the cursor codec its handler pages with. */
export interface ValidatedRequest {
  operation: Operation;
  input: Record<string, unknown>;
  meta: RequestMeta;
  cursors: CursorCodec;
}

export interface ContextOptions {
  request: ValidatedRequest;
  /** The database, or the write's open transaction. */
  stores: Stores;
  /** How the caller's standing in the workspace is loaded before the handler runs. */
  standing: StandingLoad;
  /** A grouped write's commit point; absent, `ctx.commit` allocates and records the commit on `stores`. */
  groupCommit?: GroupCommitPoint;
}

/** The commit a write made in its own transaction, chained once its rows are written. */
export interface SingleCommit {
  commit: Omit<ChainedCommit, 'chainHash'>;
  previousChainHash: string | null;
}

/** A handler's context as its execution sees it afterwards: what the answer shows, the commit it made alone. */
export interface RequestContext extends HandlerContext {
  /** The ledger ids the answer shows (its idempotency record names them). */
  readonly shown: Set<string>;
  /** Set by `commit` on a write in its own transaction; null otherwise. */
  committed: SingleCommit | null;
}

/** The context one request's handler runs with: its workspace access resolved, its standing loaded. */
export async function requestContext(services: DomainServices, options: ContextOptions): Promise<RequestContext> {
  const { request, stores, groupCommit } = options;
  const { operation, input, meta, cursors } = request;
  const access = await workspaceAccessFor(operation, input, meta, stores, options.standing);
  let now: Promise<number> | null = null;
  const shown = new Set<string>();
  const context: RequestContext = {
    ...services,
    shown,
    committed: null,
    shows(ids) {
      for (const id of ids) shown.add(id);
    },
    caller: meta.caller,
    requestId: meta.requestId,
    stores,
    cursors,
    selectedWorkspaceId: meta.selectedWorkspaceId,
    access,
    deadline: meta.deadline ?? null,
    async commit(workspaceId, subjectIds) {
      for (const id of subjectIds) shown.add(id);
      if (groupCommit) return groupCommit(workspaceId, subjectIds);
      const { previousChainHash, ...stamp } = await stores.commits.allocate(workspaceId);
      const commit = {
        workspaceId,
        sequence: stamp.sequence,
        recordedAt: stamp.recordedAt,
        operation: operation.name,
        actorId: meta.caller.actorId,
        subjectIds,
      };
      await stores.commits.insert(commit);
      context.committed = { commit, previousChainHash };
      return stamp;
    },
    now() {
      now ??= (async () => {
        const preloaded = access?.preloadedHead;
        const head =
          preloaded !== undefined ? preloaded : access ? await stores.commits.head(access.workspaceId) : null;
        return Math.max(nowSeconds(), head?.recordedAt ?? 0);
      })();
      return now;
    },
  };
  return context;
}
