import type { CommitStamp, Stores } from '@tms/ledger';
import type { FusionMethod, SearchProvider } from '@tms/search';
import type { WorkspaceAccess } from './access';
import type { Caller } from './caller';
import type { CommitWatch } from './commit-watch';
import type { CursorCodec } from './cursor';
import type { Deadline } from './deadline';
import { DomainError } from './errors';
import type { GroupCommitObserver } from './group-commit';
import type { LedgerSigningKey } from './ledger-key';
import type { QueryVectors } from './query-vectors';

/** Operator settings the rules depend on. */
export interface DomainSettings {
  /** WEBHOOKS_ALLOW_PRIVATE=1: webhooks may target loopback and private addresses, and use http there. */
  allowPrivateWebhookTargets: boolean;
  /** How hybrid recall fuses its two rankings (`DEFAULT_FUSION`; the quality benchmark compares both). */
  fusion: FusionMethod;
}

/** How a recall answered (decisions §5): the `status` of its output. */
export type RecallStatus = 'complete' | 'partial' | 'pending' | 'degraded';

/**
 * Outcomes the rules report to whoever composed the domain (the gateway counts them on its
 * /metrics), once per answer whichever transport asked; and a group commit batch still running
 * past its writes' deadlines (the gateway logs it as an error).
 */
export interface DomainObserver extends GroupCommitObserver {
  recall?(status: RecallStatus): void;
  /** One arm of a recall failed (the answer is `degraded`, the other arm still answers): for the logs. */
  recallArmFailed?(arm: 'lexical' | 'semantic', error: unknown): void;
}

/** What an operation handler gets besides its validated input. */
export interface HandlerContext {
  caller: Caller;
  requestId: string;
  /** The database, or the open write transaction for mutations. */
  stores: Stores;
  cursors: CursorCodec;
  /** The `X-Service-Workspace` header as sent (directory operations may use it). */
  selectedWorkspaceId: string | null;
  /** Present for operations scoped to a workspace. */
  access: WorkspaceAccess | null;
  /** The search provider for recall, or null when none is configured. */
  search: SearchProvider | null;
  /** Query vectors for recall's semantic arm; null when the embedder is `none` (the arm is off). */
  queryVectors: QueryVectors | null;
  settings: DomainSettings;
  observer: DomainObserver;
  /**
   * Allocate this write's commit (sequence and recorded_at) and record it. Call it late:
   * the workspace head stays locked until the transaction ends.
   */
  commit(workspaceId: string, subjectIds: string[]): Promise<CommitStamp>;
  /**
   * Name ledger ids the answer shows without writing them (e.g. deduplicated evidence), so a
   * later purge finds the stored idempotent answer. Ids passed to `commit` count already.
   */
  shows(ids: string[]): void;
  /** The server's now for reads of this workspace: never before its last commit. */
  now(): Promise<number>;
  /** The request's deadline (none: no limit), for work that waits (long polls). */
  deadline: Deadline | null;
  /** Commit notifications of this process, for long polls. */
  commitWatch: CommitWatch;
  /** The service's key that signs ledger heads (loaded, or created, on first use). */
  ledgerKey(): Promise<LedgerSigningKey>;
}

export function requireAccess(ctx: HandlerContext): WorkspaceAccess {
  if (!ctx.access) throw new DomainError('internal', 'operation needs a workspace');
  return ctx.access;
}
