import type { Ledger } from '@tms/ledger';

/**
 * An enrolled human's session caller, for tests and benches that drive the domain in process
 * (no token to verify): it may create workspaces and administers those it creates.
 */
export async function enrolledSessionCaller(ledger: Ledger, issuer: string, subject: string) {
  const now = Date.now() / 1000;
  const actor = await ledger.stores.directory.findOrCreateActor(issuer, subject, now);
  await ledger.stores.directory.enroll(issuer, subject, now);
  return {
    kind: 'session' as const,
    actorId: actor.id,
    issuer,
    subject,
    scopes: null,
    boundWorkspaceId: null,
    principal: `actor:${actor.id}`,
    credential: null,
    operator: false,
  };
}
