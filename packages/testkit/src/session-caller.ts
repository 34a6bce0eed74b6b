/** The part of the ledger this needs (typed here: the testkit does not depend on @tms/ledger). */
interface Directory {
  stores: {
    directory: {
      findOrCreateActor(issuer: string, subject: string, now: number): Promise<{ id: string }>;
      enroll(issuer: string, subject: string, now: number): Promise<unknown>;
    };
  };
}

/**
 * An enrolled human's session caller, for tests and benches that drive the domain in process
 * (no token to verify): it may create workspaces and administers those it creates.
 */
export async function enrolledSessionCaller(ledger: Directory, issuer: string, subject: string) {
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
