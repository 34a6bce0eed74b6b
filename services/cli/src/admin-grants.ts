import fs from 'node:fs/promises';
import type { Grant, GrantTarget } from '@tms/catalog';
import { DomainError } from '@tms/domain';
import type { CliEnv } from './env';
import { type AdminOutput, asOperator, type RunAsOperator, type WorkspaceOptions, withOperator } from './operator';

export interface GrantOptions extends WorkspaceOptions {
  namespace: string;
}

const asJson = (grants: unknown[]) => JSON.stringify(grants, null, 2);

/** The grants on a namespace as a JSON array, the value `grant put --grants` takes back. */
export async function listGrants(env: CliEnv, options: GrantOptions): Promise<AdminOutput> {
  const answer = await asOperator(
    env,
    'namespaces.grants.list',
    options.workspace,
    { params: { id: options.namespace } },
    undefined,
  );
  return { stdout: asJson(answer.grants), note: `${answer.grants.length} grants on ${answer.namespace_id}` };
}

/**
 * `--grants` is JSON text when it starts with `[` or `{`, else the path of a file holding it;
 * either a list of grants or an object with a `grants` list (what `/v1` takes and answers).
 */
async function readGrants(value: string): Promise<unknown> {
  const trimmed = value.trim();
  let text = trimmed;
  if (!trimmed.startsWith('[') && !trimmed.startsWith('{')) {
    try {
      text = await fs.readFile(value, 'utf8');
    } catch (error) {
      throw new DomainError(
        'invalid_input',
        `--grants: neither JSON nor a readable file (${(error as Error).message})`,
      );
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new DomainError('invalid_input', `--grants: not JSON (${(error as Error).message})`);
  }
  if (Array.isArray(parsed)) return parsed;
  if (parsed !== null && typeof parsed === 'object' && 'grants' in parsed) return parsed.grants;
  throw new DomainError('invalid_input', '--grants: expected a list of grants or an object with a grants list');
}

/** `credential cred_…`, `installation ins_…`, `actor act_…`. */
function targetName(target: GrantTarget): string {
  switch (target.kind) {
    case 'actor':
      return `actor ${target.actor_id}`;
    case 'installation':
      return `installation ${target.product_installation_id}`;
    case 'credential':
      return `credential ${target.credential_id}`;
  }
}

const grantTerms = (grant: Grant) =>
  `${grant.capabilities.join(', ') || 'no capabilities'}${grant.inherit ? ', inherited by the subtree' : ''}`;

/**
 * What replacing `before` with `after` did, target by target: `added credential cred_1 (read,
 * inherited by the subtree); revoked actor act_2; 1 unchanged`, or `nothing changed`.
 */
export function describeGrantChange(before: readonly Grant[], after: readonly Grant[]): string {
  const key = (grant: Grant) => targetName(grant.target);
  const old = new Map(before.map((grant) => [key(grant), grant]));
  const kept = new Set(after.map(key));
  const parts: string[] = [];
  let unchanged = 0;
  for (const grant of after) {
    const previous = old.get(key(grant));
    if (!previous) parts.push(`added ${key(grant)} (${grantTerms(grant)})`);
    else if (grantTerms(previous) !== grantTerms(grant)) {
      parts.push(`changed ${key(grant)} from (${grantTerms(previous)}) to (${grantTerms(grant)})`);
    } else unchanged += 1;
  }
  for (const grant of before) if (!kept.has(key(grant))) parts.push(`revoked ${key(grant)}`);
  if (parts.length === 0) return 'nothing changed';
  return [...parts, ...(unchanged > 0 ? [`${unchanged} unchanged`] : [])].join('; ');
}

/**
 * Replace a namespace's grant list, read just before so that the note says what changed. A
 * replayed idempotency key changes nothing now: the note says so.
 */
async function replaceGrants(
  run: RunAsOperator,
  workspace: string,
  namespace: string,
  change: (before: Grant[]) => unknown[],
  idempotencyKey: string | undefined,
): Promise<{ grants: Grant[]; commit: number; note: string }> {
  const before = (await run('namespaces.grants.list', workspace, { params: { id: namespace } })).answer.grants;
  const { answer, replayed } = await run(
    'namespaces.grants.put',
    workspace,
    { params: { id: namespace }, body: { grants: change(before) } },
    idempotencyKey,
  );
  const note = replayed
    ? `replayed the answer this idempotency key had at commit ${answer.commit.sequence}; nothing changed now`
    : `${describeGrantChange(before, answer.grants)} (commit ${answer.commit.sequence})`;
  return { grants: answer.grants, commit: answer.commit.sequence, note };
}

/** Replace the whole grant list of a namespace; prints the list now stored, and what changed. */
export async function putGrants(env: CliEnv, options: GrantOptions & { grants: string }): Promise<AdminOutput> {
  const grants = await readGrants(options.grants);
  const { workspace, namespace, idempotencyKey } = options;
  return withOperator(env, async (run) => {
    const put = await replaceGrants(run, workspace, namespace, () => grants as unknown[], idempotencyKey);
    const count = `${put.grants.length} grant${put.grants.length === 1 ? '' : 's'}`;
    return { stdout: asJson(put.grants), note: `${namespace} has ${count}: ${put.note}` };
  });
}

/**
 * Give a credential `capabilities` on a namespace and its subtree, beside the grants already
 * there (replacing any it held there before). The list is read and put back whole, as
 * `grant put` does; the note says what changed.
 */
export async function grantToCredential(
  run: RunAsOperator,
  workspace: string,
  namespace: string,
  credentialId: string,
  capabilities: readonly string[],
  idempotencyKey: string | undefined,
): Promise<string> {
  const target: GrantTarget = { kind: 'credential', credential_id: credentialId };
  const put = await replaceGrants(
    run,
    workspace,
    namespace,
    (before) => [
      ...before.filter((grant) => targetName(grant.target) !== targetName(target)),
      { target, capabilities, inherit: true },
    ],
    idempotencyKey,
  );
  return `${namespace}: ${put.note}`;
}
