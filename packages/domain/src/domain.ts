import crypto from 'node:crypto';
import type { TokenVerifier } from '@tms/auth';
import type { Operation } from '@tms/catalog';
import type { Ledger } from '@tms/ledger';
import { DEFAULT_FUSION, type Embedder, type FusionMethod, type SearchProvider } from '@tms/search';
import { Authenticator } from './authentication';
import type { Caller } from './caller';
import { CommitWatch } from './commit-watch';
import type { DomainObserver } from './context';
import { CursorCodec } from './cursor';
import { DomainError } from './errors';
import { Executor } from './execution';
import type { ImportLine, ImportOutcome } from './import';
import { LedgerSigningKey } from './ledger-key';
import { RequestLoaders } from './loaders';
import { QueryVectors } from './query-vectors';
import type { RateLimiter } from './rate-limiter';
import type { OperationResult, RawInput, RequestMeta } from './request';
import { workspaceAccessFor } from './workspace-resolution';

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

/**
 * The domain layer: every transport calls `authenticate` then `execute`. Validation, scopes,
 * workspace membership, idempotency and the write transaction are applied here, the same
 * way for REST, GraphQL and agent tools; the per-operation rules live in `services/`.
 *
 * It composes the parts, one job each: who is calling (`Authenticator`), which workspace a
 * request acts in and with what standing (`workspace-resolution.ts`), and running the operation
 * (`Executor`); it keeps the ledger's own keys (the head signing key, the cursor key).
 */
export class Domain {
  private cursorsPromise: Promise<CursorCodec> | null = null;
  private ledgerKeyPromise: Promise<LedgerSigningKey> | null = null;
  private readonly ledgerSigningKeyPem: string | null;
  private readonly authentication: Authenticator;
  private readonly execution: Executor;
  /** Commit notifications for long polls and subscriptions (one LISTEN per process, on first use). */
  readonly commitWatch: CommitWatch;

  constructor(
    readonly ledger: Ledger,
    verifier: TokenVerifier,
    /** The search provider recall asks; null when none is configured. */
    readonly search: SearchProvider | null = null,
    options: DomainOptions = {},
  ) {
    this.ledgerSigningKeyPem = options.ledgerSigningKeyPem ?? null;
    // A configured key that is not Ed25519 stops the process at start, not at the first head.
    if (this.ledgerSigningKeyPem !== null) LedgerSigningKey.fromPem(this.ledgerSigningKeyPem);
    this.commitWatch = new CommitWatch(ledger);
    this.authentication = new Authenticator(ledger, verifier);
    const embedder = options.embedder ?? null;
    this.execution = new Executor(ledger, {
      rateLimiter: options.rateLimiter ?? null,
      cursors: () => this.cursors(),
      services: {
        search,
        queryVectors: embedder && embedder.kind !== 'none' ? new QueryVectors(embedder) : null,
        commitWatch: this.commitWatch,
        ledgerKey: () => this.ledgerKey(),
        settings: {
          allowPrivateWebhookTargets: options.allowPrivateWebhookTargets ?? false,
          fusion: options.fusion ?? DEFAULT_FUSION,
        },
        observer: options.observer ?? {},
      },
    });
  }

  /** Resolve a bearer token to a caller; `unauthenticated` for anything not provably valid. */
  authenticate(token: string | null): Promise<Caller> {
    return this.authentication.authenticate(token);
  }

  execute(operation: Operation, raw: RawInput, meta: RequestMeta): Promise<OperationResult> {
    return this.execution.execute(operation, raw, meta);
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
      caller: await this.authentication.operatorCaller(options.workspaceId, options.operatorSubject),
      requestId: `cli_${crypto.randomBytes(8).toString('hex')}`,
      selectedWorkspaceId: options.workspaceId,
      idempotencyKey: options.idempotencyKey,
    });
  }

  /**
   * `svc import` (docs/import.md): lines into one workspace as the operator, each committed as
   * one unit with its own commits and idempotency records (`Executor.importLines`). Answers each
   * line's outcome in order; a failure of the database itself is thrown, and a rerun resumes by
   * the lines' keys.
   */
  async importLines(
    workspaceId: string,
    lines: readonly ImportLine[],
    options: { operatorSubject: string },
  ): Promise<ImportOutcome[]> {
    const caller = await this.authentication.operatorCaller(workspaceId, options.operatorSubject);
    return this.execution.importLines(caller, workspaceId, lines);
  }

  /**
   * Batched nested reads for one request (GraphQL fields below an operation's answer), under the
   * same workspace selection and read rules as `execute`. Make one per request; never share it.
   */
  loaders(meta: Omit<RequestMeta, 'idempotencyKey'>): RequestLoaders {
    const stores = this.ledger.stores;
    const selected = { name: 'loaders', workspace: 'selected' } as const;
    return new RequestLoaders(
      stores,
      meta.caller,
      async () => {
        const access = await workspaceAccessFor(selected, {}, meta, stores, { from: 'membership' });
        if (!access) throw new DomainError('internal', 'a selected workspace resolves to access');
        return access;
      },
      () => this.cursors(),
    );
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

  /** The codec of page cursors, its HMAC key kept in the ledger (created by whichever process asks first). */
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
