import crypto from 'node:crypto';
import {
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
  type Operation,
  workspaceIdSchema,
} from '@tms/catalog';
import type { Ledger, Role, Stores } from '@tms/ledger';
import type { SearchProvider } from '@tms/search';
import { WorkspaceAccess } from './access';
import { type Caller, CREDENTIAL_ISSUER, OPERATOR_ISSUER } from './caller';
import { canonicalJson } from './canonical-json';
import type { HandlerContext } from './context';
import { CursorCodec } from './cursor';
import type { Deadline } from './deadline';
import { DomainError } from './errors';
import { HANDLERS } from './handlers';
import { RequestLoaders } from './loaders';
import type { RateLimiter } from './rate-limiter';

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
}

/**
 * The domain layer: every transport calls `authenticate` then `execute`. Validation, scopes,
 * workspace membership, idempotency and the write transaction are applied here, the same
 * way for REST, GraphQL and agent tools; the per-operation rules live in `services/`.
 */
export interface DomainOptions {
  /** Per principal and operation; none means unlimited (benchmarks, the operator CLI). */
  rateLimiter?: RateLimiter | null;
}

export class Domain {
  private cursorsPromise: Promise<CursorCodec> | null = null;
  private readonly rateLimiter: RateLimiter | null;

  constructor(
    readonly ledger: Ledger,
    private readonly verifier: TokenVerifier,
    /** The search provider recall asks; null when none is configured. */
    readonly search: SearchProvider | null = null,
    options: DomainOptions = {},
  ) {
    this.rateLimiter = options.rateLimiter ?? null;
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
      if (error instanceof InvalidTokenError) throw new DomainError('unauthenticated', error.message);
      throw error;
    }
    const actor = await this.ledger.stores.directory.findOrCreateActor(verified.issuer, verified.subject, nowSeconds());
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
   * An installation credential or service key, read from the ledger on every request (never
   * cached), so that a revocation or expiry on any process is refused on the very next request.
   */
  private async authenticateCredential(token: string): Promise<Caller> {
    const named = parseCredentialSecret(token);
    if (!named) throw new DomainError('unauthenticated', 'malformed credential');
    const row = await this.ledger.stores.credentials.findCredentialForAuthentication(named.credentialId);
    // Compare before looking at anything else, so an unknown and a wrong secret cost the same.
    const matches = secretMatches(token, row?.secretSha256 ?? UNMATCHABLE_SHA256);
    if (!row || !matches || row.kind !== named.kind) throw new DomainError('unauthenticated', 'unknown credential');
    if (row.revokedAt !== null) throw new DomainError('unauthenticated', 'credential revoked');
    if (row.expiresAt !== null && row.expiresAt <= nowSeconds()) {
      throw new DomainError('unauthenticated', 'credential expired');
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
   */
  async executeAsOperator(
    operation: Operation,
    raw: RawInput,
    options: { workspaceId: string; operatorSubject: string; idempotencyKey: string | null },
  ): Promise<OperationResult> {
    const actor = await this.ledger.stores.directory.findOrCreateActor(
      OPERATOR_ISSUER,
      options.operatorSubject,
      nowSeconds(),
    );
    const caller: Caller = {
      kind: 'session',
      actorId: actor.id,
      issuer: actor.issuer,
      subject: actor.subject,
      scopes: null,
      boundWorkspaceId: options.workspaceId,
      principal: `operator:${actor.id}`,
      credential: null,
      operator: true,
    };
    return this.execute(operation, raw, {
      caller,
      requestId: `cli_${crypto.randomBytes(8).toString('hex')}`,
      selectedWorkspaceId: options.workspaceId,
      idempotencyKey: options.idempotencyKey,
    });
  }

  async execute(operation: Operation, raw: RawInput, meta: RequestMeta): Promise<OperationResult> {
    const deadline = meta.deadline ?? null;
    deadline?.check();
    // Counted per operation executed, so a GraphQL document or an MCP call with several
    // operations spends one token for each.
    this.rateLimiter?.take(meta.caller.principal, operation.name);
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
        const ctx = await this.context(operation, input, meta, stores, cursors);
        const json = JSON.stringify(await handler(input, ctx));
        if (Buffer.byteLength(json) > OPERATION_LIMITS.maxResponseBytes) {
          throw new DomainError('budget_exceeded', 'response too large');
        }
        return { json, replayed: false };
      };
      // A read commits nothing, so it may simply be abandoned at the deadline.
      return deadline ? deadline.race(read()) : read();
    }

    return this.ledger.transaction(async (stores) => {
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
      const fingerprint = sha256(canonicalJson([operation.name, input, workspaceScope]));
      if (key) {
        await stores.idempotency.lock(meta.caller.principal, key);
        const existing = await stores.idempotency.find(meta.caller.principal, key);
        if (existing) {
          if (existing.fingerprint !== fingerprint) throw new DomainError('idempotency_conflict');
          // A purge blanked this answer: what it showed no longer exists.
          if (existing.body === '') throw new DomainError('not_found', 'replayed answer was purged');
          return { json: existing.body, replayed: true };
        }
      }
      const answer = await handler(input, ctx);
      const json = JSON.stringify(answer);
      // A dry run writes nothing, not even its idempotency record.
      if (key && input.dry_run !== true) {
        await stores.idempotency.insert({
          subjectIds: [...ctx.shown],
          workspaceId: workspaceScope,
          principal: meta.caller.principal,
          key,
          operation: operation.name,
          fingerprint,
          status: 200,
          // A secret is shown once: the stored answer (and so any replay) holds null instead.
          body: operation.revealsSecret ? JSON.stringify({ ...answer, secret: null }) : json,
          createdAt: nowSeconds(),
        });
      }
      // Right before the commit: past the deadline, roll back and answer `unavailable`. A write
      // that passes this point commits, and its true answer is sent even if the deadline passes
      // during the commit itself.
      deadline?.check();
      return { json, replayed: false };
    });
  }

  private async context(
    operation: Operation,
    input: Record<string, unknown>,
    meta: RequestMeta,
    stores: Stores,
    cursors: CursorCodec,
  ): Promise<HandlerContext & { shown: Set<string> }> {
    const access = await this.resolveWorkspace(operation, input, meta, stores);
    let now: Promise<number> | null = null;
    const shown = new Set<string>();
    return {
      shown,
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
      async commit(workspaceId, subjectIds) {
        for (const id of subjectIds) shown.add(id);
        const stamp = await stores.commits.allocate(workspaceId);
        await stores.commits.insert({
          workspaceId,
          sequence: stamp.sequence,
          recordedAt: stamp.recordedAt,
          operation: operation.name,
          actorId: meta.caller.actorId,
          subjectIds,
        });
        return stamp;
      },
      now() {
        now ??= (async () => {
          const head = access ? await stores.commits.head(access.workspaceId) : null;
          return Math.max(nowSeconds(), head?.recordedAt ?? 0);
        })();
        return now;
      },
    };
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
  ): Promise<WorkspaceAccess | null> {
    if (operation.workspace === 'directory') return null;
    let workspaceId: string | null;
    if (operation.workspace === 'path') {
      workspaceId = input.id as string;
      if (meta.selectedWorkspaceId !== null && meta.selectedWorkspaceId !== workspaceId) {
        throw new DomainError('invalid_input', 'X-Service-Workspace differs from the path');
      }
    } else {
      workspaceId = meta.caller.boundWorkspaceId ?? meta.selectedWorkspaceId;
      if (workspaceId === null) throw new DomainError('invalid_input', 'X-Service-Workspace is required');
    }
    // A bound credential's selector may only repeat its workspace, never name another.
    const bound = meta.caller.boundWorkspaceId;
    if (bound && (bound !== workspaceId || (meta.selectedWorkspaceId ?? bound) !== bound)) {
      throw new DomainError('not_found', 'credential bound to another workspace');
    }
    if (!workspaceIdSchema.safeParse(workspaceId).success) throw new DomainError('invalid_input', 'bad workspace id');
    return new WorkspaceAccess(
      stores,
      workspaceId,
      meta.caller,
      await this.standingIn(workspaceId, meta.caller, stores),
    );
  }

  /**
   * The caller's role in the workspace, checked on every request: members by membership,
   * credentials by being bound to it (their grants decide the rest), the operator as admin.
   */
  private async standingIn(workspaceId: string, caller: Caller, stores: Stores): Promise<Role> {
    if (caller.credential) return 'member';
    if (caller.operator) {
      if (!(await stores.directory.getWorkspace(workspaceId))) throw new DomainError('not_found', 'no such workspace');
      return 'admin';
    }
    const role = await stores.memberships.roleOf(workspaceId, caller.actorId);
    if (!role) throw new DomainError('not_found', 'not a member');
    return role;
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

function checkIdempotencyKey(key: string | null): string {
  if (key === null) throw new DomainError('idempotency_required');
  if (!idSchema.safeParse(key).success) throw new DomainError('invalid_input', 'malformed Idempotency-Key');
  return key;
}

/** Validate each part against the catalog and merge them into the handler's flat input. */
function validate(operation: Operation, raw: RawInput): Record<string, unknown> {
  const params = operation.input.params.safeParse(raw.params);
  const query = operation.input.query.safeParse(raw.query);
  const body = operation.input.body
    ? operation.input.body.safeParse(raw.body)
    : raw.body === undefined
      ? { success: true as const, data: {} }
      : { success: false as const };
  if (!params.success || !query.success || !body.success) throw new DomainError('invalid_input', 'schema');
  return { ...(body.data as object), ...query.data, ...params.data };
}

const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');

function nowSeconds(): number {
  return Date.now() / 1000;
}
