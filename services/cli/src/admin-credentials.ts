import { DomainError } from '@tms/domain';
import { grantToCredential } from './admin-grants';
import type { CliEnv } from './env';
import { type AdminOutput, asOperator, stepKey, type WorkspaceOptions, withOperator } from './operator';

export interface IssueOptions extends WorkspaceOptions {
  installation?: string;
  name: string;
  capabilities: string[];
  namespaces?: string[];
  expiresAt?: number;
  /** Also grant it its capabilities on each of `namespaces` and their subtrees. */
  grant?: boolean;
}

/**
 * Issue an installation credential or a service key; stdout is the secret, shown once. With
 * `grant`, the credential is then granted its capabilities on each of its namespaces (a commit
 * each); should that fail, the secret is still printed, with what is left to do.
 */
export async function issueCredential(
  env: CliEnv,
  kind: 'installation' | 'service_key',
  options: IssueOptions,
): Promise<AdminOutput> {
  if (options.grant && options.namespaces === undefined) {
    throw new DomainError('invalid_input', '--grant: needs --namespaces (the namespaces to grant it on)');
  }
  const body = {
    kind,
    ...(kind === 'installation' ? { product_installation_id: options.installation } : {}),
    name: options.name,
    capabilities: options.capabilities,
    ...(options.namespaces !== undefined ? { namespace_ids: options.namespaces } : {}),
    ...(options.expiresAt !== undefined ? { expires_at: options.expiresAt } : {}),
  };
  const noun = kind === 'installation' ? 'installation credential' : 'service key';
  return withOperator(env, async (run) => {
    const { answer } = await run('credentials.create', options.workspace, { body }, options.idempotencyKey);
    const { credential, secret, commit } = answer;
    if (secret === null) {
      throw new Error(`this idempotency key already issued ${credential.id}; its secret was shown once`);
    }
    const notes = [
      `issued ${noun} ${credential.id} (${credential.capabilities.join(', ')}) at commit ${commit.sequence}`,
    ];
    let failure: string | undefined;
    if (options.grant) {
      for (const namespace of options.namespaces ?? []) {
        try {
          const key = stepKey(options.idempotencyKey, `grant-${namespace}`);
          notes.push(
            await grantToCredential(run, options.workspace, namespace, credential.id, credential.capabilities, key),
          );
        } catch (error) {
          failure = `granting ${credential.id} on ${namespace} failed (${(error as Error).message}): grant it with svc admin grant put, or revoke it`;
          break;
        }
      }
    }
    notes.push('the secret above is shown once');
    return { stdout: secret, note: notes.join('\n'), ...(failure ? { failure } : {}) };
  });
}

/** Install a product; stdout is its id. */
export async function createInstallation(env: CliEnv, options: WorkspaceOptions & { name: string }) {
  const answer = await asOperator(
    env,
    'installations.create',
    options.workspace,
    { body: { name: options.name } },
    options.idempotencyKey,
  );
  return { stdout: answer.installation.id, note: `created at commit ${answer.commit.sequence}` };
}

/** Revoke an installation (and its credentials) or one credential; stdout is the id. */
export async function revoke(
  env: CliEnv,
  name: 'credentials.revoke' | 'installations.revoke',
  options: WorkspaceOptions & { id: string },
): Promise<AdminOutput> {
  const { id, workspace, idempotencyKey: key } = options;
  const raw = { params: { id }, body: {} };
  const answer =
    name === 'credentials.revoke'
      ? await asOperator(env, name, workspace, raw, key).then((a) => ({ row: a.credential, commit: a.commit }))
      : await asOperator(env, name, workspace, raw, key).then((a) => ({ row: a.installation, commit: a.commit }));
  const revokedAt = answer.row.revoked_at;
  return {
    stdout: id,
    note: answer.commit
      ? `revoked at ${revokedAt} (commit ${answer.commit.sequence})`
      : `already revoked at ${revokedAt}`,
  };
}

interface ListedRow {
  id: string;
  name: string;
  kind?: string;
  product_installation_id?: string | null;
  capabilities?: string[];
  revoked_at: number | null;
}

/** Every page of a listing, as tab-separated lines (id, kind, installation, name, capabilities, state). */
export async function listAll(
  env: CliEnv,
  name: 'credentials.list' | 'installations.list',
  { workspace }: { workspace: string },
): Promise<AdminOutput> {
  const rows: ListedRow[] = [];
  let cursor: string | undefined;
  do {
    const raw = { query: { limit: 100, ...(cursor ? { cursor } : {}) } };
    const answer =
      name === 'credentials.list'
        ? await asOperator(env, name, workspace, raw, undefined).then((a) => ({
            rows: a.credentials,
            next: a.next_cursor,
          }))
        : await asOperator(env, name, workspace, raw, undefined).then((a) => ({
            rows: a.installations,
            next: a.next_cursor,
          }));
    rows.push(...answer.rows);
    cursor = answer.next ?? undefined;
  } while (cursor);
  const line = (r: ListedRow) =>
    [
      r.id,
      r.kind ?? 'installation',
      r.product_installation_id ?? '-',
      r.name,
      r.capabilities?.join(',') ?? '-',
      r.revoked_at === null ? 'active' : 'revoked',
    ].join('\t');
  return { stdout: rows.map(line).join('\n'), note: `${rows.length} ${name.split('.')[0]}` };
}
