import crypto from 'node:crypto';
import { OPERATION_LIMITS, OPERATIONS_BY_NAME, type Operation } from '@tms/catalog';
import {
  type CommitStamp,
  type IdempotencyRecord,
  type InsertCollector,
  isKeyHeldViolation,
  type Ledger,
  type Stores,
} from '@tms/ledger';
import type { WorkspaceAccess } from './access';
import type { Caller } from './caller';
import type { HandlerContext } from './context';
import type { CursorCodec } from './cursor';
import { overLimit } from './error-detail';
import { DomainError } from './errors';
import {
  type CommitRequest,
  GroupCommitter,
  type GroupedWrite,
  type GroupResult,
  type PreparedStep,
  singleStep,
} from './group-commit';
import { HANDLERS } from './handlers';
import { checkIdempotencyKey, fingerprintOf, keyScopeOf, recordOf, replayOf } from './idempotency';
import {
  committedOutcome,
  IMPORT_BATCH_SIZE,
  type ImportLine,
  type ImportOutcome,
  type ImportStep,
  type ImportStepRunner,
  importUnit,
  rejectedOutcome,
} from './import';
import type { RateLimiter } from './rate-limiter';
import { type OperationResult, type RawInput, type RequestMeta, validate } from './request';
import { type DomainServices, type RequestContext, requestContext, type ValidatedRequest } from './request-context';
import { keyClaimOf, keyRaceLost } from './services/memories';
import { adoptStanding, namespacesNamedBy } from './workspace-resolution';

/**
 * Writes committed in groups per workspace on Postgres. Only operations whose rules only read
 * before their commit point and whose rows after it are collected (`memories.insert`): a write
 * in a batch does not see its batch-mates' rows, so it must not depend on them (fresh ids only).
 */
const GROUP_COMMITTED: ReadonlySet<string> = new Set(['memories.create']);

type Handler = (input: unknown, ctx: HandlerContext) => Promise<object>;

/** A write as `execute` validated it, before it runs. */
interface PendingWrite extends ValidatedRequest {
  key: string | null;
  handler: Handler;
}

export interface ExecutorOptions {
  /** Per principal and operation; null: unlimited. */
  rateLimiter: RateLimiter | null;
  /** What every handler is lent besides its request. */
  services: DomainServices;
  /** The cursor codec, its key read from the ledger on first use. */
  cursors(): Promise<CursorCodec>;
}

/**
 * Runs an operation for a caller: the rate limit, validation and scope, then a read as it is,
 * or a write in its own transaction or grouped with others (`GroupCommitter`), under its
 * idempotency key; and bulk imports as grouped writes of their own.
 */
export class Executor {
  private readonly rateLimiter: RateLimiter | null;
  private readonly services: DomainServices;
  private readonly cursors: () => Promise<CursorCodec>;
  /** Per-workspace group commit (Postgres only: PGlite has one connection and runs serially). */
  private readonly groupCommits: GroupCommitter | null;
  /** Bulk imports' own group committer (`importLines`), made on first use. */
  private importCommits: GroupCommitter | null = null;

  constructor(
    private readonly ledger: Ledger,
    options: ExecutorOptions,
  ) {
    this.rateLimiter = options.rateLimiter;
    this.services = options.services;
    this.cursors = options.cursors;
    this.groupCommits = ledger.driver === 'postgres' ? GroupCommitter.of(ledger) : null;
  }

  async execute(operation: Operation, raw: RawInput, meta: RequestMeta): Promise<OperationResult> {
    const deadline = meta.deadline ?? null;
    deadline?.check();
    // Counted per operation executed, so a GraphQL document or an MCP call with several
    // operations spends one token for each.
    // A shared store answers with a promise; the in-process buckets at once (no extra turn).
    const limited = this.rateLimiter?.take(meta.caller.principal, operation.name);
    if (limited) await limited;
    const key = operation.idempotent ? checkIdempotencyKey(meta.idempotencyKey) : null;
    const input = validate(operation, raw);
    if (operation.scope && meta.caller.scopes !== null && !meta.caller.scopes.includes(operation.scope)) {
      throw new DomainError('forbidden', `token lacks ${operation.scope}`);
    }
    const cursors = await this.cursors();
    const handler = HANDLERS[operation.name] as Handler;

    const request = { operation, input, meta, cursors };
    if (!operation.mutates) {
      const read = async (): Promise<OperationResult> => {
        const stores = this.ledger.stores;
        const ctx = await requestContext(this.services, { request, stores, standing: { from: 'read' } });
        const value = await handler(input, ctx);
        const json = JSON.stringify(value);
        if (Buffer.byteLength(json) > OPERATION_LIMITS.maxResponseBytes) {
          throw overLimit('response', 'the answer', OPERATION_LIMITS.maxResponseBytes);
        }
        return { json, replayed: false, value };
      };
      // A read commits nothing, so it may simply be abandoned at the deadline.
      return deadline ? deadline.race(read()) : read();
    }

    const write = { ...request, key, handler };
    const grouped = key !== null && GROUP_COMMITTED.has(operation.name) && operation.workspace === 'selected';
    const workspaceId = meta.caller.boundWorkspaceId ?? meta.selectedWorkspaceId;
    const running =
      this.groupCommits && grouped && workspaceId !== null
        ? this.groupCommits.submit(workspaceId, this.groupedWrite(write, key), this.services.observer)
        : this.writeAlone(write);
    return this.keyRaceAnswered(running, input, workspaceId);
  }

  /**
   * `svc import` (docs/import.md): lines into one workspace as `caller` (the operator), each
   * through the rules of `evidence.create` and `memories.create` and committed as one unit, many
   * lines per transaction (`IMPORT_BATCH_SIZE`), each with its own commits and idempotency
   * records. Answers each line's outcome in order; a line the service refuses is `rejected` with
   * its error and leaves nothing behind. A failure of the database itself (`unavailable`,
   * `internal`, a lost connection) is thrown: the run stops, and a rerun resumes by the lines' keys.
   */
  async importLines(caller: Caller, workspaceId: string, lines: readonly ImportLine[]): Promise<ImportOutcome[]> {
    const meta: RequestMeta = {
      caller,
      requestId: `import_${crypto.randomBytes(8).toString('hex')}`,
      selectedWorkspaceId: workspaceId,
      idempotencyKey: null,
    };
    const cursors = await this.cursors();
    const pending = (step: ImportStep): PendingWrite => {
      const operation = OPERATIONS_BY_NAME.get(step.operation) as Operation;
      const handler = HANDLERS[step.operation] as Handler;
      return { operation, input: step.input, meta, key: step.key, handler, cursors };
    };
    const runner: ImportStepRunner = {
      principal: caller.principal,
      validate: (name, body) => validate(OPERATIONS_BY_NAME.get(name) as Operation, { params: {}, query: {}, body }),
      prepare: (step, stores) => this.prepareStep(pending(step), step.key, stores),
      writeIn: (stores, step) => this.writeIn(stores, pending(step)),
      transaction: (fn) => this.ledger.transaction(fn),
    };
    this.importCommits ??= GroupCommitter.standalone(this.ledger, IMPORT_BATCH_SIZE);
    const committer = this.importCommits;
    const outcomeOf = async (run: () => Promise<GroupResult>): Promise<ImportOutcome> => {
      try {
        return committedOutcome(await run());
      } catch (error) {
        if (error instanceof DomainError && error.code !== 'unavailable' && error.code !== 'internal') {
          return rejectedOutcome(error);
        }
        throw error;
      }
    };
    const units = lines.map((line) => {
      try {
        return importUnit(line, runner);
      } catch (error) {
        return error;
      }
    });
    // Queued together, so that the first batch is as full as the rest.
    const running = committer.submitAll(
      workspaceId,
      units.filter((unit): unit is GroupedWrite => !(unit instanceof Error)),
    );
    let next = 0;
    return Promise.all(
      units.map((unit, i) => {
        if (unit instanceof Error) {
          return outcomeOf(() => Promise.reject(unit));
        }
        const answer = running[next++] as Promise<GroupResult>;
        return outcomeOf(() => this.keyRaceAnswered(answer, (lines[i] as ImportLine).memory, workspaceId));
      }),
    );
  }

  /**
   * A create that the key index refused even on the ledger's retry (a concurrent create kept
   * winning) answers the rule's `conflict` naming the holder (decisions §12), never `internal`.
   */
  private async keyRaceAnswered<Result extends OperationResult>(
    running: Promise<Result>,
    input: Record<string, unknown>,
    workspaceId: string | null,
  ): Promise<Result> {
    try {
      return await running;
    } catch (error) {
      const { namespace_id: namespaceId, key } = input;
      if (!isKeyHeldViolation(error) || workspaceId === null) throw error;
      if (typeof namespaceId !== 'string' || typeof key !== 'string') throw error;
      throw await keyRaceLost(this.ledger.stores, workspaceId, namespaceId, key);
    }
  }

  /** A write in its own transaction. */
  private writeAlone(write: PendingWrite): Promise<OperationResult> {
    return this.ledger.transaction((stores) => this.writeIn(stores, write));
  }

  /** A write on an open transaction (its own, or an imported line's with the line's other step). */
  private async writeIn(stores: Stores, write: PendingWrite): Promise<OperationResult> {
    const { operation, input, meta, key, handler } = write;
    const deadline = meta.deadline ?? null;
    if (deadline) {
      // Queued behind other writers past the deadline: start nothing. On Postgres, no statement
      // may outlive the deadline either (a row lock held elsewhere is waited for only that long;
      // the cancelled statement is `unavailable` and the transaction rolls back).
      deadline.check();
      if (this.ledger.driver === 'postgres') {
        await stores.db.execute(`set local statement_timeout = ${Math.max(1, Math.ceil(deadline.remainingMs()))}`);
      }
    }
    const ctx = await requestContext(this.services, { request: write, stores, standing: { from: 'membership' } });
    const workspaceScope = ctx.access?.workspaceId ?? '';
    const fingerprint = fingerprintOf(operation, input, workspaceScope);
    const keyScope = keyScopeOf(meta.caller);
    if (key) {
      await stores.idempotency.lock(meta.caller.principal, key);
      const existing = await stores.idempotency.find(meta.caller.principal, key, workspaceScope, keyScope);
      if (existing) return replayOf(existing, fingerprint);
    }
    const answer = await handler(input, ctx);
    // Its rows are written: the commit takes its chain hash from them (docs/ledger-proofs.md).
    if (ctx.committed) await stores.chain.seal(ctx.committed.commit, ctx.committed.previousChainHash);
    const json = JSON.stringify(answer);
    const record = recordToKeep(write, fingerprint, ctx, answer, json);
    if (record) await stores.idempotency.insert(record, keyScope);
    // Right before the commit: past the deadline, roll back and answer `unavailable`. A write
    // that passes this point commits, and its true answer is sent even if the deadline passes
    // during the commit itself.
    deadline?.check();
    return { json, replayed: false };
  }

  /**
   * A write for the group committer: the same checks and idempotency record as `writeAlone`, in
   * two phases. `prepare` runs up to the handler's `ctx.commit` (reads and rules only) and
   * suspends it there; `finish` hands it the stamp the batch allocated, and its rows and
   * idempotency record join the batch's inserts.
   */
  private groupedWrite(write: PendingWrite, key: string): GroupedWrite {
    const { input, meta } = write;
    return {
      deadline: meta.deadline ?? null,
      idempotencyKeys: [`${meta.caller.principal}\u001f${key}`],
      claims: [keyClaimOf(input)].filter((claim) => claim !== null),
      alone: () => this.writeAlone(write),
      prepare: async (stores) => singleStep(await this.prepareStep(write, key, stores)),
    };
  }

  /**
   * Phase one of a grouped write (or of one step of an imported line) on the batch's
   * transaction: its standing and idempotency record, then its handler up to `ctx.commit`,
   * where it is suspended until the batch hands it a stamp.
   */
  private async prepareStep(write: PendingWrite, key: string, stores: Stores): Promise<PreparedStep> {
    const { operation, input, meta, handler } = write;
    let reached: (point: { request: CommitRequest; stamp: Deferred<CommitStamp> }) => void = () => {};
    const commitPoint = new Promise<{ request: CommitRequest; stamp: Deferred<CommitStamp> }>((resolve) => {
      reached = resolve;
    });
    // The batch holds this write's idempotency lock already (`idempotencyKeys`): the caller's
    // standing, the namespace the write names and the idempotency record come in one
    // statement, whose snapshot is taken after the lock was granted.
    const found: { record: IdempotencyRecord | null } = { record: null };
    const load = async (access: WorkspaceAccess) => {
      const named = namespacesNamedBy(input);
      const loaded = await stores.idempotency.findWithStanding(
        meta.caller.principal,
        key,
        access.workspaceId,
        access.standingQuery(),
        named,
        keyScopeOf(meta.caller),
      );
      // Decided as a standing loaded piece by piece: a non-member is `not_found` before any replay.
      adoptStanding(access, loaded, named);
      found.record = loaded.record;
    };
    const groupCommit = (workspaceId: string, subjectIds: string[]) => {
      const stamp = deferred<CommitStamp>();
      reached({
        request: { workspaceId, subjectIds, operation: operation.name, actorId: meta.caller.actorId },
        stamp,
      });
      return stamp.promise;
    };
    const ctx = await requestContext(this.services, {
      request: write,
      stores,
      standing: { from: 'write', load },
      groupCommit,
    });
    const fingerprint = fingerprintOf(operation, input, ctx.access?.workspaceId ?? '');
    if (found.record) return { kind: 'answered', result: replayOf(found.record, fingerprint) };
    const answering = handler(input, ctx);
    const first = await Promise.race([commitPoint, answering.then(() => null)]);
    return {
      kind: 'committing',
      commit: first?.request ?? null,
      answer: answering,
      finish: async (stamp, collector: InsertCollector) => {
        if (first && stamp) first.stamp.resolve(stamp);
        const answer = await answering;
        const json = JSON.stringify(answer);
        const record = recordToKeep({ ...write, key }, fingerprint, ctx, answer, json);
        if (record) collector.idempotencyRecord(record, keyScopeOf(meta.caller));
        return { json, replayed: false, value: answer };
      },
      abandon: (error) => {
        answering.catch(() => {});
        first?.stamp.reject(error);
      },
    };
  }
}

/** The idempotency record a write keeps of its answer: none without a key, nor for a dry run (it writes nothing). */
function recordToKeep(
  write: PendingWrite,
  fingerprint: string,
  ctx: RequestContext,
  answer: object,
  json: string,
): IdempotencyRecord | null {
  if (!write.key || write.input.dry_run === true) return null;
  const { operation, meta, key } = write;
  const workspaceScope = ctx.access?.workspaceId ?? '';
  return recordOf({ operation, caller: meta.caller, key, fingerprint, workspaceScope, shown: ctx.shown }, answer, json);
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve: (value: T) => void = () => {};
  let reject: (error: unknown) => void = () => {};
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
