import { DomainError } from '@tms/domain';
import type { CliEnv } from './env';
import { signInProblem } from './issuers';
import { type AdminOutput, stepKey, type WorkspaceOptions, withOperator } from './operator';

export interface WorkspaceCreateOptions {
  name: string;
  /** The actor (`act_…`) made the workspace's one admin in place of the operator. */
  owner?: string;
  idempotencyKey?: string;
}

/**
 * Create a workspace as the operator; stdout is its id. `workspaces.create` makes its creator,
 * the operator's actor, the first admin (decisions §6); with `owner`, a second commit
 * (`workspaces.members.put`) hands the workspace to that actor as its one admin. The owner is
 * looked up first, so an unknown one writes nothing.
 */
export async function createWorkspace(env: CliEnv, options: WorkspaceCreateOptions): Promise<AdminOutput> {
  return withOperator(env, async (run, ledger) => {
    const warnings: string[] = [];
    if (options.owner !== undefined) {
      const owner = await ledger.stores.directory.getActor(options.owner);
      if (!owner) {
        throw new DomainError('invalid_input', `--owner: no actor ${options.owner} (svc admin actor prints one's id)`);
      }
      const problem = signInProblem(env, owner.issuer);
      if (problem) warnings.push(`warning: ${owner.id} cannot sign in yet: ${problem}`);
    }
    const created = await run('workspaces.create', null, { body: { name: options.name } }, options.idempotencyKey);
    const workspace = created.answer.workspace;
    const notes = [
      `${created.replayed ? 'replayed: created' : 'created'} workspace ${workspace.id} (${workspace.name}), the operator its first admin`,
    ];
    if (options.owner !== undefined) {
      const members = [{ actor_id: options.owner, role: 'admin' }];
      const put = await run(
        'workspaces.members.put',
        workspace.id,
        { params: { id: workspace.id }, body: { members } },
        stepKey(options.idempotencyKey, 'owner'),
      );
      notes.push(`${options.owner} is its one admin (commit ${put.answer.commit.sequence})`);
    }
    return { stdout: workspace.id, note: [...notes, ...warnings].join('\n') };
  });
}

export interface NamespaceCreateOptions extends WorkspaceOptions {
  name: string;
  parent?: string;
}

/** Create a namespace (a root one, or under `parent`) as the operator; stdout is its id. */
export async function createNamespace(env: CliEnv, options: NamespaceCreateOptions): Promise<AdminOutput> {
  return withOperator(env, async (run) => {
    const body = { parent_id: options.parent ?? null, name: options.name };
    const { answer, replayed } = await run('namespaces.create', options.workspace, { body }, options.idempotencyKey);
    const where = options.parent ? `under ${options.parent}` : 'at the root';
    return {
      stdout: answer.namespace.id,
      note: `${replayed ? 'replayed: created' : 'created'} namespace ${answer.namespace.name} ${where} at commit ${answer.commit.sequence}`,
    };
  });
}
