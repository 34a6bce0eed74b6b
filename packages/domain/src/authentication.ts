import {
  AUTH_FAILURES,
  InvalidTokenError,
  KeySetUnavailableError,
  looksLikeCredentialSecret,
  parseCredentialSecret,
  secretMatches,
  type TokenVerifier,
} from '@tms/auth';
import { CAPABILITIES, type Capability } from '@tms/catalog';
import type { ActorRow, CredentialRow, Ledger } from '@tms/ledger';
import { LRUCache } from 'lru-cache';
import { type Caller, CREDENTIAL_ISSUER, OPERATOR_ISSUER } from './caller';
import { DomainError } from './errors';
import { nowSeconds } from './temporal';

/** How many (issuer, subject) → actor ids, and credential → workspace, a process remembers. */
const IDENTITY_CACHE_SIZE = 10_000;

/** Compared against when no credential row exists, so that both paths hash and compare. */
const UNMATCHABLE_SHA256 = '0'.repeat(64);

/**
 * Who is calling: a bearer token resolved to a caller. Tokens of the configured issuers name an
 * actor; credential secrets (installation credentials, service keys) are checked against their
 * row on every request; the operator CLI acts as an operator actor. Only identities are kept in
 * process, never standing (that is read per request, `workspace-resolution.ts`).
 */
export class Authenticator {
  /** (issuer, subject) → actor: an actor's id never changes. */
  private readonly actors = new LRUCache<string, ActorRow>({ max: IDENTITY_CACHE_SIZE });
  /**
   * Credential id -> its workspace. A credential never changes workspace, so the mapping is kept;
   * the credential row itself (revocation, expiry) is still read on every request.
   */
  private readonly credentialWorkspaces = new LRUCache<string, string>({ max: IDENTITY_CACHE_SIZE });

  constructor(
    private readonly ledger: Ledger,
    private readonly verifier: TokenVerifier,
  ) {}

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

  /** The operator CLI's caller: workspace-admin standing in `workspaceId` (none: a directory operation). */
  async operatorCaller(workspaceId: string | null, operatorSubject: string): Promise<Caller> {
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
   * The actor of (issuer, subject). Its id never changes, so it is kept in process; on a miss it
   * is looked up first and created only when absent (a known actor's read writes nothing).
   */
  private async actorOf(issuer: string, subject: string): Promise<ActorRow> {
    const key = `${issuer}\u0000${subject}`;
    const cached = this.actors.get(key);
    if (cached) return cached;
    const directory = this.ledger.stores.directory;
    const actor =
      (await directory.findActor(issuer, subject)) ??
      (await directory.findOrCreateActor(issuer, subject, nowSeconds()));
    this.actors.set(key, actor);
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
}
