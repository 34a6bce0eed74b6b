import crypto from 'node:crypto';
import { parseArgs } from 'node:util';
import { OPERATIONS_BY_NAME, type Operation, type OperationName, type OperationOutput } from '@tms/catalog';
import { composeDomain } from '@tms/composition';
import type { RawInput } from '@tms/domain';
import type { CliEnv } from './env';
import { UsageError } from './usage-error';

/** What a command prints: `stdout` is the one value a script captures, `note` goes to stderr. */
export interface AdminOutput {
  stdout: string;
  note?: string;
}

const list = (value: string | undefined) => (value === undefined ? undefined : value.split(',').filter(Boolean));

function options(args: string[], extra: Record<string, { type: 'string' }>) {
  const { values } = parseArgs({
    args,
    options: { workspace: { type: 'string' }, 'idempotency-key': { type: 'string' }, ...extra },
    strict: true,
  });
  const workspace = values.workspace as string | undefined;
  if (!workspace) throw new UsageError('--workspace is required');
  return { values: values as Record<string, string | undefined>, workspace };
}

function required(values: Record<string, string | undefined>, name: string): string {
  const value = values[name];
  if (value === undefined) throw new UsageError(`--${name} is required`);
  return value;
}

/**
 * Run one catalog operation as the operator, through the domain layer: the same validation,
 * rules, ledger commit and idempotency record as the `/v1` route of that operation.
 */
type AnswerOf<Name extends OperationName> = OperationOutput<Extract<Operation, { name: Name }>>;

async function asOperator<Name extends OperationName>(
  env: CliEnv,
  name: Name,
  workspaceId: string,
  raw: Partial<RawInput>,
  idempotencyKey: string | undefined,
): Promise<AnswerOf<Name>> {
  const operation = OPERATIONS_BY_NAME.get(name);
  if (!operation) throw new Error(`operation ${name} missing from the catalog`);
  // Issuance and revocation never search: compose without a provider (no index is prepared).
  const { domain, ledger } = await composeDomain({ ...env, SEARCH_PROVIDER: 'none' }, { holder: 'svc admin' });
  try {
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

async function issue(env: CliEnv, kind: 'installation' | 'service_key', args: string[]): Promise<AdminOutput> {
  const { values, workspace } = options(args, {
    installation: { type: 'string' },
    name: { type: 'string' },
    capabilities: { type: 'string' },
    namespaces: { type: 'string' },
    'expires-at': { type: 'string' },
  });
  const expiresAt = values['expires-at'];
  if (expiresAt !== undefined && !Number.isFinite(Number(expiresAt))) {
    throw new UsageError('--expires-at takes Unix seconds');
  }
  const body = {
    kind,
    ...(kind === 'installation' ? { product_installation_id: required(values, 'installation') } : {}),
    name: required(values, 'name'),
    capabilities: list(required(values, 'capabilities')),
    ...(values.namespaces !== undefined ? { namespace_ids: list(values.namespaces) } : {}),
    ...(expiresAt !== undefined ? { expires_at: Number(expiresAt) } : {}),
  };
  const answer = await asOperator(env, 'credentials.create', workspace, { body }, values['idempotency-key']);
  const { credential, secret, commit } = answer;
  if (secret === null) {
    throw new Error(`this idempotency key already issued ${credential.id}; its secret was shown once`);
  }
  return {
    stdout: secret,
    note: `issued ${kind === 'installation' ? 'installation credential' : 'service key'} ${credential.id} (${credential.capabilities.join(', ')}) at commit ${commit.sequence}; the secret above is shown once`,
  };
}

async function revoke(env: CliEnv, name: 'credentials.revoke' | 'installations.revoke', args: string[]) {
  const { values, workspace } = options(args, { id: { type: 'string' } });
  const id = required(values, 'id');
  const raw = { params: { id }, body: {} };
  const key = values['idempotency-key'];
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
async function listAll(env: CliEnv, name: 'credentials.list' | 'installations.list', args: string[]) {
  const { workspace } = options(args, {});
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

/** `svc admin installation|credential|service-key ...` */
export async function adminCredentials(env: CliEnv, noun: string, args: string[]): Promise<AdminOutput> {
  const [verb, ...rest] = args;
  switch (`${noun} ${verb}`) {
    case 'installation create': {
      const { values, workspace } = options(rest, { name: { type: 'string' } });
      const answer = await asOperator(
        env,
        'installations.create',
        workspace,
        { body: { name: required(values, 'name') } },
        values['idempotency-key'],
      );
      return { stdout: answer.installation.id, note: `created at commit ${answer.commit.sequence}` };
    }
    case 'installation revoke':
      return revoke(env, 'installations.revoke', rest);
    case 'installation list':
      return listAll(env, 'installations.list', rest);
    case 'credential issue':
      return issue(env, 'installation', rest);
    case 'service-key issue':
      return issue(env, 'service_key', rest);
    case 'credential revoke':
    case 'service-key revoke':
      return revoke(env, 'credentials.revoke', rest);
    case 'credential list':
    case 'service-key list':
      return listAll(env, 'credentials.list', rest);
    default:
      throw new UsageError(`unknown admin command ${noun} ${verb ?? '(none)'}`);
  }
}
