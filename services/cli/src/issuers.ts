import { DEV_ISSUER } from '@tms/auth';
import type { CliEnv } from './env';

/**
 * The issuers whose tokens this deployment verifies, read from the same variables the gateway
 * reads (so the CLI must be given them too): SESSION_ISSUER for people, OAUTH_ISSUER for OAuth
 * clients, and the dev issuer with DEV_AUTH=1.
 */
export function verifiedIssuers(env: CliEnv): { sessions: string[]; oauth: string | null } {
  const sessions: string[] = [];
  if (env.SESSION_ISSUER && env.SESSION_JWKS_URI && env.SESSION_AUDIENCE) sessions.push(env.SESSION_ISSUER);
  if (env.DEV_AUTH === '1' && env.NODE_ENV !== 'production') sessions.push(DEV_ISSUER);
  const oauth = env.OAUTH_ISSUER && env.OAUTH_JWKS_URI && env.OAUTH_AUDIENCE ? env.OAUTH_ISSUER : null;
  return { sessions, oauth };
}

const listed = (issuers: string[]) => (issuers.length === 0 ? 'none' : issuers.join(', '));

/** Issuers match as exact strings (decisions §6): name the near miss a newcomer makes. */
function nearMiss(issuer: string, known: string[]): string {
  const bare = (text: string) => text.replace(/\/+$/, '').toLowerCase();
  const near = known.find((candidate) => candidate !== issuer && bare(candidate) === bare(issuer));
  return near ? ` (issuers match as exact strings: did you mean ${near}?)` : '';
}

/**
 * Why enrolling `issuer` could never let anyone create a workspace here, or null when a session
 * token of that issuer is verified. Enrollment serves `workspaces.create` alone, which takes a
 * session token: an OAuth access token is `forbidden` there, whoever issued it.
 */
export function enrollmentProblem(env: CliEnv, issuer: string): string | null {
  const { sessions, oauth } = verifiedIssuers(env);
  if (sessions.includes(issuer)) return null;
  const sessionIssuers = `session issuers verified here: ${listed(sessions)}`;
  if (issuer === oauth) {
    return `${issuer} is the OAuth issuer (OAUTH_ISSUER), and OAuth access tokens cannot create workspaces; ${sessionIssuers}`;
  }
  const known = [...sessions, ...(oauth ? [oauth] : [])];
  const configured =
    sessions.length === 0
      ? 'this deployment verifies no session token (SESSION_ISSUER unset, DEV_AUTH off), so nobody can sign in to create a workspace: svc admin workspace create makes one without an identity provider'
      : sessionIssuers;
  return `${issuer} is not an issuer this deployment verifies${nearMiss(issuer, known)}; ${configured}`;
}

/** Why an actor of `issuer` cannot sign in here at all, or null when some token of it is verified. */
export function signInProblem(env: CliEnv, issuer: string): string | null {
  const { sessions, oauth } = verifiedIssuers(env);
  if (sessions.includes(issuer) || issuer === oauth) return null;
  return `its issuer ${issuer} is not one this deployment verifies (${listed([...sessions, ...(oauth ? [oauth] : [])])})`;
}
