import fs from 'node:fs/promises';
import { DomainError } from '@tms/domain';
import { type AdminOutput, asOperator, type WorkspaceOptions } from './admin-credentials';
import type { CliEnv } from './env';

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

/** Replace the whole grant list of a namespace; prints the list now stored. */
export async function putGrants(env: CliEnv, options: GrantOptions & { grants: string }): Promise<AdminOutput> {
  const grants = await readGrants(options.grants);
  const answer = await asOperator(
    env,
    'namespaces.grants.put',
    options.workspace,
    { params: { id: options.namespace }, body: { grants } },
    options.idempotencyKey,
  );
  return {
    stdout: asJson(answer.grants),
    note: `${answer.namespace_id} now has ${answer.grants.length} grants (commit ${answer.commit.sequence}); grants left out were revoked`,
  };
}
