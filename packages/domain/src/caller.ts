import type { CallerKind, Capability, Scope } from '@tms/catalog';
import type { GrantTarget } from '@tms/ledger';

/** The issuer under which credential actors are recorded (subject: the credential id). */
export const CREDENTIAL_ISSUER = 'urn:tms:credential';
/** The issuer under which operator CLI actions are recorded (subject: the operator's name). */
export const OPERATOR_ISSUER = 'urn:tms:operator';

/** The authority of an installation credential or a service key in its one workspace. */
export interface CredentialAuthority {
  id: string;
  /** Its installation, whose grants it shares; null for a service key. */
  installationId: string | null;
  /** Ceilings: its grants give it no more than these capabilities ... */
  capabilities: readonly Capability[];
  /** ... on no namespaces but these and their subtrees (null: anywhere in the workspace). */
  namespaceIds: readonly string[] | null;
}

/** Who is calling, as the server resolved it: never taken from the request body. */
export interface Caller {
  kind: CallerKind;
  actorId: string;
  issuer: string;
  subject: string;
  /** OAuth scopes; null when the caller is not scope-limited (human sessions). */
  scopes: readonly string[] | null;
  /** Service keys and installation credentials are bound to one workspace. */
  boundWorkspaceId: string | null;
  /** The key under which idempotency records of this caller are kept. */
  principal: string;
  /** Set for installation credentials and service keys: grants to it, not membership, decide. */
  credential: CredentialAuthority | null;
  /** The operator CLI: workspace admin of its bound workspace without being a member. */
  operator: boolean;
}

export function hasScope(caller: Caller, scope: Scope): boolean {
  return caller.scopes === null || caller.scopes.includes(scope);
}

/** The grant targets a credential holds grants through: itself and, if any, its installation. */
export function grantTargetsOf(credential: CredentialAuthority): GrantTarget[] {
  const targets: GrantTarget[] = [{ kind: 'credential', id: credential.id }];
  if (credential.installationId) targets.push({ kind: 'installation', id: credential.installationId });
  return targets;
}
