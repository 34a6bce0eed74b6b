import type { CallerKind, Scope } from '@tms/catalog';

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
}

export function hasScope(caller: Caller, scope: Scope): boolean {
  return caller.scopes === null || caller.scopes.includes(scope);
}
