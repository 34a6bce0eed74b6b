import crypto from 'node:crypto';
import {
  AUTH_FAILURES,
  InvalidTokenError,
  KeySetUnavailableError,
  looksLikeCredentialSecret,
  parseCredentialSecret,
  secretMatches,
  type TokenVerifier,
} from '@tms/auth';
import {
  CAPABILITIES,
  type Capability,
  idSchema,
  OPERATION_LIMITS,
  OPERATIONS_BY_NAME,
  type Operation,
  workspaceIdSchema,
} from '@tms/catalog';
import {
  type ActorRow,
  type ChainedCommit,
  type CommitStamp,
  type CredentialRow,
  type IdempotencyRecord,
  type InsertCollector,
  isKeyHeldViolation,
  type KeyScope,
  type Ledger,
  type Role,
  type Stores,
} from '@tms/ledger';
import { DEFAULT_FUSION, type Embedder, type FusionMethod, type SearchProvider } from '@tms/search';
import { roleFrom, WorkspaceAccess } from './access';
import { type Caller, CREDENTIAL_ISSUER, OPERATOR_ISSUER } from './caller';
import { canonicalJson } from './canonical-json';
import { CommitWatch } from './commit-watch';
import type { DomainObserver, DomainSettings, HandlerContext } from './context';
import { CursorCodec } from './cursor';
import type { Deadline } from './deadline';
import { describeIssues, invalidInput, overLimit } from './error-detail';
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
import { LedgerSigningKey } from './ledger-key';
import { RequestLoaders } from './loaders';
import { sha256Hex } from './present';
import { QueryVectors } from './query-vectors';
import type { RateLimiter } from './rate-limiter';
import { keyClaimOf, keyRaceLost } from './services/memories';

/**
 * Reads whose handler loads the caller's standing with its resource in one statement. Every other
 * read of a workspace loads the standing (and the namespaces its input names) in one statement
 * before its handler runs.
 */
const STANDING_IN_HANDLER: ReadonlySet<string> = new Set([
  'memories.get',
  'evidence.get',
  'namespaces.get',
  'memories.history',
]);

/** How many (issuer, subject) → actor ids a process remembers (an actor's id never changes). */
const ACTOR_CACHE_SIZE = 10_000;

/**
 * Writes committed in groups per workspace on Postgres. Only operations whose rules only read
 * before their commit point and whose rows after it are collected (`memories.insert`): a write
 * in a batch does not see its batch-mates' rows, so it must not depend on them (fresh ids only).
 */
const GROUP_COMMITTED: ReadonlySet<string> = new Set(['memories.create']);

/** The commit a write made in its own transaction, chained once its rows are written. */
interface SingleCommit {
  commit: Omit<ChainedCommit, 'chainHash'>;
  previousChainHash: string | null;
}

/** Compared against when no credential row exists, so that both paths hash and compare. */
const UNMATCHABLE_SHA256 = '0'.repeat(64);

/** What a transport hands over: the raw parts of the request, still unvalidated. */
export interface RawInput {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body: unknown;
}

export interface RequestMeta {
  caller: Caller;
  requestId: string;
  /** `X-Service-Workspace` as sent, or null. */
  selectedWorkspaceId: string | null;
  /** `Idempotency-Key` as sent, or null. */
  idempotencyKey: string | null;
  /**
   * The operation's deadline (the transport's, counted from the request's arrival). Reads
   * answer `unavailable` when it passes; a write checks it right before its commit and rolls
   * back instead, so callers must await the write rather than race it. None: no limit.
   */
  deadline?: Deadline | null;
}

/** A successful answer as exact JSON text (replays are byte for byte). */
export interface OperationResult {
  json: string;
  replayed: boolean;
  /**
   * A read's answer as its handler returned it, the value `json` was serialized from, so that
   * an in-process caller (GraphQL) need not parse `json` again. Shared: never modify it.
   */
  value?: unknown;
}

/**
 * The domain layer: every transport calls `authenticate` then `execute`. Validation, scopes,
 * workspace membership, idempotency and the write transaction are applied here, the same
 * way for REST, GraphQL and agent tools; the per-operation rules live in `services/`.
 */
export interface DomainOptions {
  /** Per principal and operation; none means unlimited (benchmarks, the operator CLI). */
  rateLimiter?: RateLimiter | null;
  /** WEBHOOKS_ALLOW_PRIVATE=1 (default off). */
  allowPrivateWebhookTargets?: boolean;
  /** Told the outcome of each recall (metrics); none: nobody listens. */
  observer?: DomainObserver;
  /** Embeds recall's queries for the semantic arm; none, or kind `none`: the semantic arm is off. */
  embedder?: Embedder | null;
  /** Hybrid recall's fusion; absent: `DEFAULT_FUSION` (`pnpm bench:recall` sets it to compare). */
  fusion?: FusionMethod;
  /** LEDGER_SIGNING_KEY_FILE's contents (an Ed25519 PKCS#8 PEM); absent: a key kept in the ledger. */
  ledgerSigningKeyPem?: string | undefined;
}

export class Domain {
  private cursorsPromise: Promise<CursorCodec> | null = null;
  private ledgerKeyPromise: Promise<LedgerSigningKey> | null = null;
  private readonly ledgerSigningKeyPem: string | null;
  private readonly rateLimiter: RateLimiter | null;
  private readonly settings: DomainSettings;
  private readonly observer: DomainObserver;
  /** The embedder behind a query-vector cache, or null when the semantic arm is off. */
  private readonly queryVectors: QueryVectors | null;
  /** Per-workspace group commit (Postgres only: PGlite has one connection and runs serially). */
  private readonly groupCommits: GroupCommitter | null;
  /** (issuer, subject) → actor, most recently used last: identities only, never standing. */
  private readonly actors = new Map<string, ActorRow>();
  /**
   * Credential id -> its workspace. A credential never changes workspace, so the mapping is kept;
   * the credential row itself (revocation, expiry) is still read on every request.
   */
  private readonly credentialWorkspaces = new Map<string, string>();
  /** Bulk imports' own group committer (`importLines`), made on first use. */
  private importCommits: GroupCommitter | null = null;
  /** Commit notifications for long polls and subscriptions (one LISTEN per process, on first use). */
  readonly commitWatch: CommitWatch;

  constructor(
    readonly ledger: Ledger,
    private readonly verifier: TokenVerifier,
    /** The search provider recall asks; null when none is configured. */
    readonly search: SearchProvider | null = null,
    options: DomainOptions = {},
  ) {
    this.rateLimiter = options.rateLimiter ?? null;
    this.ledgerSigningKeyPem = options.ledgerSigningKeyPem ?? null;
    // A configured key that is not Ed25519 stops the process at start, not at the first head.
    if (this.ledgerSigningKeyPem !== null) LedgerSigningKey.fromPem(this.ledgerSigningKeyPem);
    this.settings = {
      allowPrivateWebhookTargets: options.allowPrivateWebhookTargets ?? false,
      fusion: options.fusion ?? DEFAULT_FUSION,
    };
    this.observer = options.observer ?? {};
    const embedder = options.embedder ?? null;
    this.queryVectors = embedder && embedder.kind !== 'none' ? new QueryVectors(embedder) : null;
    this.groupCommits = ledger.driver === 'postgres' ? GroupCommitter.of(ledger) : null;
    this.commitWatch = new CommitWatch(ledger);
  }

  /** Resolve a bearer token to a caller; `unauthenticated` for anything not provably valid. */
  async authenticate(token: string | null): Promise<Caller> {
    if (!token) throw new DomainError('unauthenticated');
    if (looksLikeCredentialSecret(token)) return this.authenticateCredential(token);
    let verified: Awaited<ReturnType<TokenVerifier['verify']>>;
    try {
      verified = await this.verifier.verify(token);
    } catch (error) {
      if (error instanceof KeySetUnavailableError) throw new DomainError('unavailable', error.message);
      if (error instanceof InvalidTokenError) throw new DomainError('unauthenticated', error.reason);
      throw error;
    }
    const actor = await this.actorOf(verified.issuer, verified.subject);
    return {
      kind: verified.kind,
      actorId: actor.id,
      issuer: actor.issuer,
      subject: actor.subject,
      scopes: verified.scopes,
      boundWorkspaceId: null,
      principal: `actor:${actor.id}`,
      credential: null,
      operator: false,
    };
  }

  /**
   * The actor of (issuer, subject). Its id never changes, so it is kept in process; on a miss it
   * is looked up first and created only when absent (a known actor's read writes nothing).
   */
  private async actorOf(issuer: string, subject: string): Promise<ActorRow> {
    const key = `${issuer}\u0000${subject}`;
    const cached = this.actors.get(key);
    if (cached) {
      this.actors.delete(key);
      this.actors.set(key, cached);
      return cached;
    }
    const directory = this.ledger.stores.directory;
    const actor =
      (await directory.findActor(issuer, subject)) ??
      (await directory.findOrCreateActor(issuer, subject, nowSeconds()));
    this.actors.set(key, actor);
    if (this.actors.size > ACTOR_CACHE_SIZE) {
      const oldest = this.actors.keys().next().value;
      if (oldest !== undefined) this.actors.delete(oldest);
    }
    return actor;
  }

  /** The credential row, read from its workspace alone (the directory names it once per process). */
  private async findCredential(id: string): Promise<CredentialRow | null> {
    const storage = this.ledger.stores.credentials;
    let workspaceId = this.credentialWorkspaces.get(id);
    if (workspaceId === undefined) {
      const found = await storage.workspaceOfCredential(id);
      if (found === null) return null;
      workspaceId = found;
      this.credentialWorkspaces.set(id, workspaceId);
      if (this.credentialWorkspaces.size > ACTOR_CACHE_SIZE) {
        const oldest = this.credentialWorkspaces.keys().next().value;
        if (oldest !== undefined) this.credentialWorkspaces.delete(oldest);
      }
    }
    return storage.getCredential(workspaceId, id);
  }

  /**
   * An installation credential or service key, read from the ledger on every request (never
   * cached), so that a revocation or expiry on any process is refused on the very next request.
   */
  private async authenticateCredential(token: string): Promise<Caller> {
    const named = parseCredentialSecret(token);
    if (!named) throw new DomainError('unauthenticated', AUTH_FAILURES.credential);
    const row = await this.findCredential(named.credentialId);
    // Compare before looking at anything else, so an unknown and a wrong secret cost the same.
    const matches = secretMatches(token, row?.secretSha256 ?? UNMATCHABLE_SHA256);
    // Unknown, wrong and revoked secrets read alike: the reason never tells whether one exists.
    if (!row || !matches || row.kind !== named.kind || row.revokedAt !== null) {
      throw new DomainError('unauthenticated', AUTH_FAILURES.credential);
    }
    // Only the holder of the right secret learns that it expired.
    if (row.expiresAt !== null && row.expiresAt <= nowSeconds()) {
      throw new DomainError('unauthenticated', AUTH_FAILURES.credentialExpired);
    }
    const capabilities = row.capabilities as Capability[];
    const scopes = (capabilities.includes('admin') ? CAPABILITIES : capabilities).map((c) => `svc:${c}`);
    return {
      kind: row.kind,
      actorId: row.actorId,
      issuer: CREDENTIAL_ISSUER,
      subject: row.id,
      scopes,
      boundWorkspaceId: row.workspaceId,
      principal: `credential:${row.id}`,
      credential: {
        id: row.id,
        installationId: row.installationId,
        capabilities,
        namespaceIds: row.namespaceIds,
      },
      operator: false,
    };
  }

  /**
   * The operator CLI (`svc admin ...`): run an operation in one workspace with workspace-admin
   * standing, through the same validation, rules, commit and idempotency record as a request.
   * A directory operation (`workspaces.create`) takes no workspace (`workspaceId` null).
   */
  async executeAsOperator(
    operation: Operation,
    raw: RawInput,
    options: { workspaceId: string | null; operatorSubject: string; idempotencyKey: string | null },
  ): Promise<OperationResult> {
    return this.execute(operation, raw, {
      caller: await this.operatorCaller(options.workspaceId, options.operatorSubject),
      requestId: `cli_${crypto.randomBytes(8).toString('hex')}`,
      selectedWorkspaceId: options.workspaceId,
      idempotencyKey: options.idempotencyKey,
    });
  }

  /** The operator CLI's caller: workspace-admin standing in `workspaceId` (none: a directory operation). */
  private async operatorCaller(workspaceId: string | null, operatorSubject: string): Promise<Caller> {
    const actor = await this.ledger.stores.directory.findOrCreateActor(OPERATOR_ISSUER, operatorSubject, nowSeconds());
    return {
      kind: 'session',
      actorId: actor.id,
      issuer: actor.issuer,
      subject: actor.subject,
      scopes: null,
      boundWorkspaceId: workspaceId,
      principal: `operator:${actor.id}`,
      credential: null,
      operator: true,
    };
  }

  /**
   * `svc import` (docs/import.md): lines into one workspace as the operator, each through the
   * rules of `evidence.create` and `memories.create` and committed as one unit, many lines per
   * transaction (`IMPORT_BATCH_SIZE`), each with its own commits and idempotency records. Answers
   * each line's outcome in order; a line the service refuses is `rejected` with its error and
   * leaves nothing behind. A failure of the database itself (`unavailable`, `internal`, a lost
   * connection) is thrown: the run stops, and a rerun resumes by the lines' keys.
   */
  async importLines(
    workspaceId: string,
    lines: readonly ImportLine[],
    options: { operatorSubject: string },
  ): Promise<ImportOutcome[]> {
    const caller = await this.operatorCaller(workspaceId, options.operatorSubject);
    const meta: RequestMeta = {
      caller,
      requestId: `import_${crypto.randomBytes(8).toString('hex')}`,
      selectedWorkspaceId: workspaceId,
      idempotencyKey: null,
    };
    const cursors = await this.cursors();
    const pending = (step: ImportStep): PendingWrite => {
      const operation = OPERATIONS_BY_NAME.get(step.operation) as Operation;
      const handler = HANDLERS[step.operation] as PendingWrite['handler'];
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
    const handler = HANDLERS[operation.name] as (input: unknown, ctx: HandlerContext) => Promise<object>;

    if (!operation.mutates) {
      const read = async (): Promise<OperationResult> => {
        const stores = this.ledger.stores;
        const ctx = await this.context(operation, input, meta, stores, cursors, true);
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

    const write = { operation, input, meta, key, handler, cursors };
    const grouped = key !== null && GROUP_COMMITTED.has(operation.name) && operation.workspace === 'selected';
    const workspaceId = meta.caller.boundWorkspaceId ?? meta.selectedWorkspaceId;
    const running =
      this.groupCommits && grouped && workspaceId !== null
        ? this.groupCommits.submit(workspaceId, this.groupedWrite(write, key), this.observer)
        : this.writeAlone(write);
    return this.keyRaceAnswered(running, input, workspaceId);
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
  private async writeIn(
    stores: Stores,
    { operation, input, meta, key, handler, cursors }: PendingWrite,
  ): Promise<OperationResult> {
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
    const ctx = await this.context(operation, input, meta, stores, cursors);
    const workspaceScope = ctx.access?.workspaceId ?? '';
    const fingerprint = sha256Hex(canonicalJson([operation.name, input, workspaceScope]));
    const keyScope = keyScopeOf(meta);
    if (key) {
      await stores.idempotency.lock(meta.caller.principal, key);
      const existing = await stores.idempotency.find(meta.caller.principal, key, workspaceScope, keyScope);
      if (existing) {
        if (existing.fingerprint !== fingerprint) throw new DomainError('idempotency_conflict');
        // A purge blanked this answer: what it showed no longer exists.
        if (existing.body === '') throw new DomainError('not_found', 'replayed answer was purged');
        return { json: existing.body, replayed: true };
      }
    }
    const answer = await handler(input, ctx);
    // Its rows are written: the commit takes its chain hash from them (docs/ledger-proofs.md).
    if (ctx.committed) await stores.chain.seal(ctx.committed.commit, ctx.committed.previousChainHash);
    const json = JSON.stringify(answer);
    // A dry run writes nothing, not even its idempotency record.
    if (key && input.dry_run !== true) {
      const stored = { operation, meta, key, fingerprint, workspaceId: workspaceScope, shown: ctx.shown };
      await stores.idempotency.insert(recordOf(stored, answer, json), keyScope);
    }
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
    const { operation, input, meta, handler, cursors } = write;
    let reached: (point: { request: CommitRequest; stamp: Deferred<CommitStamp> }) => void = () => {};
    const commitPoint = new Promise<{ request: CommitRequest; stamp: Deferred<CommitStamp> }>((resolve) => {
      reached = resolve;
    });
    // The batch holds this write's idempotency lock already (`idempotencyKeys`): the caller's
    // standing, the namespace the write names and the idempotency record come in one
    // statement, whose snapshot is taken after the lock was granted.
    const found: { record: IdempotencyRecord | null } = { record: null };
    const loadStanding = async (access: WorkspaceAccess) => {
      const named = [input.namespace_id, input.parent_id].filter((id): id is string => typeof id === 'string');
      const loaded = await stores.idempotency.findWithStanding(
        meta.caller.principal,
        key,
        access.workspaceId,
        access.standingQuery(),
        named,
        keyScopeOf(meta),
      );
      // Decided as a standing loaded piece by piece: a non-member is `not_found` before any replay.
      access.adopt(loaded.standing);
      const byId = new Map(loaded.namespaces.map((row) => [row.id, row]));
      for (const id of named) access.primeNamespace(id, byId.get(id) ?? null);
      found.record = loaded.record;
    };
    const atCommitPoint = (workspaceId: string, subjectIds: string[]) => {
      const stamp = deferred<CommitStamp>();
      reached({
        request: { workspaceId, subjectIds, operation: operation.name, actorId: meta.caller.actorId },
        stamp,
      });
      return stamp.promise;
    };
    const ctx = await this.context(operation, input, meta, stores, cursors, false, atCommitPoint, loadStanding);
    const workspaceScope = ctx.access?.workspaceId ?? '';
    const fingerprint = sha256Hex(canonicalJson([operation.name, input, workspaceScope]));
    const existing = found.record;
    if (existing) {
      if (existing.fingerprint !== fingerprint) throw new DomainError('idempotency_conflict');
      if (existing.body === '') throw new DomainError('not_found', 'replayed answer was purged');
      return { kind: 'answered', result: { json: existing.body, replayed: true } };
    }
    const answering = handler(input, ctx);
    const first = await Promise.race([commitPoint, answering.then(() => null)]);
    const record = (answer: object, collector: InsertCollector): GroupResult => {
      const json = JSON.stringify(answer);
      if (input.dry_run !== true) {
        const stored = { operation, meta, key, fingerprint, workspaceId: workspaceScope, shown: ctx.shown };
        collector.idempotencyRecord(recordOf(stored, answer, json), keyScopeOf(meta));
      }
      return { json, replayed: false, value: answer };
    };
    return {
      kind: 'committing',
      commit: first?.request ?? null,
      answer: answering,
      finish: async (stamp, collector) => {
        if (first && stamp) first.stamp.resolve(stamp);
        return record(await answering, collector);
      },
      abandon: (error) => {
        answering.catch(() => {});
        first?.stamp.reject(error);
      },
    };
  }

  private async context(
    operation: Operation,
    input: Record<string, unknown>,
    meta: RequestMeta,
    stores: Stores,
    cursors: CursorCodec,
    /** A read: its standing comes from one statement, with its resource or before it (STANDING_IN_HANDLER). */
    deferStanding = false,
    /** A grouped write's commit point: the group committer allocates and records the commit. */
    groupCommit: ((workspaceId: string, subjectIds: string[]) => Promise<CommitStamp>) | null = null,
    /** A write that loads its standing itself, in one statement with its idempotency record. */
    writeStanding: ((access: WorkspaceAccess) => Promise<void>) | null = null,
  ): Promise<HandlerContext & { shown: Set<string>; committed: SingleCommit | null }> {
    const access = await this.resolveWorkspace(operation, input, meta, stores, deferStanding || writeStanding !== null);
    if (access && writeStanding) await writeStanding(access);
    else if (access && deferStanding && !STANDING_IN_HANDLER.has(operation.name)) {
      await this.loadStanding(access, input, stores);
    }
    let now: Promise<number> | null = null;
    const shown = new Set<string>();
    const context: HandlerContext & { shown: Set<string>; committed: SingleCommit | null } = {
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
      search: this.search,
      queryVectors: this.queryVectors,
      deadline: meta.deadline ?? null,
      commitWatch: this.commitWatch,
      ledgerKey: () => this.ledgerKey(),
      settings: this.settings,
      observer: this.observer,
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

  /**
   * Batched nested reads for one request (GraphQL fields below an operation's answer), under the
   * same workspace selection and read rules as `execute`. Make one per request; never share it.
   */
  loaders(meta: Omit<RequestMeta, 'idempotencyKey'>): RequestLoaders {
    const stores = this.ledger.stores;
    return new RequestLoaders(
      stores,
      meta.caller,
      async () => {
        const access = await this.resolveWorkspace(
          { workspace: 'selected' },
          {},
          { ...meta, idempotencyKey: null },
          stores,
        );
        if (!access) throw new DomainError('internal', 'a selected workspace resolves to access');
        return access;
      },
      () => this.cursors(),
    );
  }

  /** Membership is checked on every request: a non-member and an absent workspace are one `not_found`. */
  private async resolveWorkspace(
    operation: Pick<Operation, 'workspace'>,
    input: Record<string, unknown>,
    meta: RequestMeta,
    stores: Stores,
    deferStanding = false,
  ): Promise<WorkspaceAccess | null> {
    if (operation.workspace === 'directory') return null;
    let workspaceId: string | null;
    if (operation.workspace === 'path') {
      workspaceId = input.id as string;
      if (meta.selectedWorkspaceId !== null && meta.selectedWorkspaceId !== workspaceId) {
        throw new DomainError('invalid_input', 'X-Service-Workspace: differs from the workspace in the path');
      }
    } else {
      workspaceId = meta.caller.boundWorkspaceId ?? meta.selectedWorkspaceId;
      if (workspaceId === null) throw new DomainError('invalid_input', 'X-Service-Workspace: is required');
    }
    // A bound credential's selector may only repeat its workspace, never name another.
    const bound = meta.caller.boundWorkspaceId;
    if (bound && (bound !== workspaceId || (meta.selectedWorkspaceId ?? bound) !== bound)) {
      throw new DomainError('not_found', 'credential bound to another workspace');
    }
    if (!workspaceIdSchema.safeParse(workspaceId).success) {
      const place = operation.workspace === 'path' ? 'params.id' : 'X-Service-Workspace';
      throw new DomainError('invalid_input', `${place}: is not a workspace id`);
    }
    if (deferStanding) return WorkspaceAccess.deferred(stores, workspaceId, meta.caller);
    return new WorkspaceAccess(
      stores,
      workspaceId,
      meta.caller,
      await this.standingIn(workspaceId, meta.caller, stores),
    );
  }

  /**
   * A read's standing (role or grants, and the head) and the namespaces its input names, from one
   * statement; decided by the same rules as `standingIn`.
   */
  private async loadStanding(access: WorkspaceAccess, input: Record<string, unknown>, stores: Stores): Promise<void> {
    const named = [input.namespace_id, input.parent_id].filter((id): id is string => typeof id === 'string');
    const loaded = await stores.memberships.standing(access.workspaceId, access.standingQuery(), named);
    access.adopt(loaded.standing);
    const byId = new Map(loaded.namespaces.map((row) => [row.id, row]));
    for (const id of named) access.primeNamespace(id, byId.get(id) ?? null);
  }

  /**
   * The caller's role in the workspace, checked on every request: members by membership,
   * credentials by being bound to it (their grants decide the rest), the operator as admin.
   */
  private async standingIn(workspaceId: string, caller: Caller, stores: Stores): Promise<Role> {
    if (caller.credential) return roleFrom(caller, { role: null, workspaceExists: true });
    if (caller.operator) {
      return roleFrom(caller, {
        role: null,
        workspaceExists: (await stores.directory.getWorkspace(workspaceId)) !== null,
      });
    }
    return roleFrom(caller, {
      role: await stores.memberships.roleOf(workspaceId, caller.actorId),
      workspaceExists: true,
    });
  }

  /** The key that signs ledger heads; its public half is the JWKS the gateway publishes. */
  ledgerKey(): Promise<LedgerSigningKey> {
    const pem = this.ledgerSigningKeyPem;
    this.ledgerKeyPromise ??= (
      pem !== null ? Promise.resolve(LedgerSigningKey.fromPem(pem)) : LedgerSigningKey.load(this.ledger.stores)
    ).catch((error) => {
      this.ledgerKeyPromise = null;
      throw error;
    });
    return this.ledgerKeyPromise;
  }

  private cursors(): Promise<CursorCodec> {
    this.cursorsPromise ??= this.ledger.stores.directory
      .secret('cursor_hmac_key', () => crypto.randomBytes(32).toString('base64url'))
      .then((secret) => new CursorCodec(secret))
      .catch((error) => {
        this.cursorsPromise = null;
        throw error;
      });
    return this.cursorsPromise;
  }
}

/** A write as `execute` validated it, before it runs. */
interface PendingWrite {
  operation: Operation;
  input: Record<string, unknown>;
  meta: RequestMeta;
  key: string | null;
  handler: (input: unknown, ctx: HandlerContext) => Promise<object>;
  cursors: CursorCodec;
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

/** The idempotency record of a write's answer (decisions §8). */
function recordOf(
  write: {
    operation: Operation;
    meta: RequestMeta;
    key: string;
    fingerprint: string;
    workspaceId: string;
    shown: ReadonlySet<string>;
  },
  answer: object,
  json: string,
): IdempotencyRecord {
  return {
    subjectIds: [...write.shown],
    workspaceId: write.workspaceId,
    principal: write.meta.caller.principal,
    key: write.key,
    operation: write.operation.name,
    fingerprint: write.fingerprint,
    status: 200,
    // A secret is shown once: the stored answer (and so any replay) holds null instead.
    body: write.operation.revealsSecret ? JSON.stringify({ ...answer, secret: null }) : json,
    createdAt: nowSeconds(),
  };
}

/** A credential bound to one workspace keeps its keys there; anyone else's key holds in every workspace. */
function keyScopeOf(meta: RequestMeta): KeyScope {
  return meta.caller.boundWorkspaceId === null ? 'principal' : 'workspace';
}

function checkIdempotencyKey(key: string | null): string {
  if (key === null) throw new DomainError('idempotency_required');
  if (!idSchema.safeParse(key).success)
    throw new DomainError(
      'invalid_input',
      'Idempotency-Key: must be 1-200 characters of A-Z, a-z, 0-9, ".", "_", ":", "-"',
    );
  return key;
}

/** Validate each part against the catalog and merge them into the handler's flat input. */
function validate(operation: Operation, raw: RawInput): Record<string, unknown> {
  const params = operation.input.params.safeParse(raw.params);
  if (!params.success) throw invalidInput(describeIssues('params', params.error.issues, raw.params));
  const query = operation.input.query.safeParse(raw.query);
  if (!query.success) throw invalidInput(describeIssues('query', query.error.issues, raw.query));
  if (!operation.input.body) {
    if (raw.body !== undefined) throw invalidInput('body: this operation takes no body');
    return { ...query.data, ...params.data };
  }
  const body = operation.input.body.safeParse(raw.body);
  if (!body.success) throw invalidInput(describeIssues('body', body.error.issues, raw.body));
  return { ...(body.data as object), ...query.data, ...params.data };
}

function nowSeconds(): number {
  return Date.now() / 1000;
}
