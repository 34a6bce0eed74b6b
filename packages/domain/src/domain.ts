import crypto from 'node:crypto';
import { InvalidTokenError, KeySetUnavailableError, type TokenVerifier } from '@tms/auth';
import { idSchema, OPERATION_LIMITS, type Operation, workspaceIdSchema } from '@tms/catalog';
import type { Ledger, Stores } from '@tms/ledger';
import type { SearchProvider } from '@tms/search';
import { WorkspaceAccess } from './access';
import type { Caller } from './caller';
import { canonicalJson } from './canonical-json';
import type { HandlerContext } from './context';
import { CursorCodec } from './cursor';
import { DomainError } from './errors';
import { HANDLERS } from './handlers';
import { RequestLoaders } from './loaders';

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
export class Domain {
  private cursorsPromise: Promise<CursorCodec> | null = null;

  constructor(
    readonly ledger: Ledger,
    private readonly verifier: TokenVerifier,
    /** The search provider recall asks; null when none is configured. */
    readonly search: SearchProvider | null = null,
  ) {}

  /** Resolve a bearer token to a caller; `unauthenticated` for anything not provably valid. */
  async authenticate(token: string | null): Promise<Caller> {
    if (!token) throw new DomainError('unauthenticated');
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
    };
  }

  async execute(operation: Operation, raw: RawInput, meta: RequestMeta): Promise<OperationResult> {
    const key = operation.idempotent ? checkIdempotencyKey(meta.idempotencyKey) : null;
    const input = validate(operation, raw);
    if (operation.scope && meta.caller.scopes !== null && !meta.caller.scopes.includes(operation.scope)) {
      throw new DomainError('forbidden', `token lacks ${operation.scope}`);
    }
    const cursors = await this.cursors();
    const handler = HANDLERS[operation.name] as (input: unknown, ctx: HandlerContext) => Promise<object>;

    if (!operation.mutates) {
      const stores = this.ledger.stores;
      const ctx = await this.context(operation, input, meta, stores, cursors);
      const json = JSON.stringify(await handler(input, ctx));
      if (Buffer.byteLength(json) > OPERATION_LIMITS.maxResponseBytes) {
        throw new DomainError('budget_exceeded', 'response too large');
      }
      return { json, replayed: false };
    }

    return this.ledger.transaction(async (stores) => {
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
      const json = JSON.stringify(await handler(input, ctx));
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
          body: json,
          createdAt: nowSeconds(),
        });
      }
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
    if (meta.caller.boundWorkspaceId && meta.caller.boundWorkspaceId !== workspaceId) {
      throw new DomainError('not_found', 'credential bound to another workspace');
    }
    if (!workspaceIdSchema.safeParse(workspaceId).success) throw new DomainError('invalid_input', 'bad workspace id');
    const role = await stores.memberships.roleOf(workspaceId, meta.caller.actorId);
    if (!role) throw new DomainError('not_found', 'not a member');
    return new WorkspaceAccess(stores, workspaceId, meta.caller, role);
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
