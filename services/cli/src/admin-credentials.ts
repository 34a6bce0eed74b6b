import crypto from 'node:crypto';
import { OPERATIONS_BY_NAME, type Operation, type OperationName, type OperationOutput } from '@tms/catalog';
import { composeDomain } from '@tms/composition';
import type { RawInput } from '@tms/domain';
import type { CliEnv } from './env';

/** What a command prints: `stdout` is the one value a script captures, `note` goes to stderr. */
export interface AdminOutput {
  stdout: string;
  note?: string;
}

/**
 * Run one catalog operation as the operator, through the domain layer: the same validation,
 * rules, ledger commit and idempotency record as the `/v1` route of that operation.
 */
type AnswerOf<Name extends OperationName> = OperationOutput<Extract<Operation, { name: Name }>>;

export async function asOperator<Name extends OperationName>(
  env: CliEnv,
  name: Name,
  workspaceId: string,
  raw: Partial<RawInput>,
  idempotencyKey: string | undefined,
): Promise<AnswerOf<Name>> {
  const operation = OPERATIONS_BY_NAME.get(name);
  if (!operation) throw new Error(`operation ${name} missing from the catalog`);
  // Issuance and revocation never search: compose without a provider (no index is prepared). One
  // operation per process: its rate limit is counted in process, without a Redis connection.
  const { domain, ledger } = await composeDomain(
    { ...env, SEARCH_PROVIDER: 'none', RATE_LIMIT_REDIS_URL: undefined },
    { holder: 'svc admin' },
  );
  try {
    // The embedded ledger was migrated in composing; a Postgres one must be already.
    await ledger.assertReady();
    const result = await domain.executeAsOperator(
      operation,
      { params: raw.params ?? {}, query: raw.query ?? {}, body: raw.body },
      {
        workspaceId,
        operatorSubject: env.USER ?? 'operator',
        idempotencyKey: operation.idempotent
          ? (idempotencyKey ?? `cli-${crypto.randomBytes(12).toString('hex')}`)
          : null,
      },
    );
    return JSON.parse(result.json) as AnswerOf<Name>;
  } finally {
    await ledger.close();
  }
}

/** The options every workspace-scoped admin command takes. */
export interface WorkspaceOptions {
  workspace: string;
  idempotencyKey?: string;
}

export interface IssueOptions extends WorkspaceOptions {
  installation?: string;
  name: string;
  capabilities: string[];
  namespaces?: string[];
  expiresAt?: number;
}

/** Issue an installation credential or a service key; stdout is the secret, shown once. */
export async function issueCredential(
  env: CliEnv,
  kind: 'installation' | 'service_key',
  options: IssueOptions,
): Promise<AdminOutput> {
  const body = {
    kind,
    ...(kind === 'installation' ? { product_installation_id: options.installation } : {}),
    name: options.name,
    capabilities: options.capabilities,
    ...(options.namespaces !== undefined ? { namespace_ids: options.namespaces } : {}),
    ...(options.expiresAt !== undefined ? { expires_at: options.expiresAt } : {}),
  };
  const answer = await asOperator(env, 'credentials.create', options.workspace, { body }, options.idempotencyKey);
  const { credential, secret, commit } = answer;
  if (secret === null) {
    throw new Error(`this idempotency key already issued ${credential.id}; its secret was shown once`);
  }
  return {
    stdout: secret,
    note: `issued ${kind === 'installation' ? 'installation credential' : 'service key'} ${credential.id} (${credential.capabilities.join(', ')}) at commit ${commit.sequence}; the secret above is shown once`,
  };
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
