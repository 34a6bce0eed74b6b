// biome-ignore-all lint/suspicious/noExplicitAny: fields built at run time from the catalog are untyped for Pothos.
import { OPERATIONS, type Operation } from '@tms/catalog';
import { END_OF_TIME } from '@tms/domain';
import { builder } from '../builder';
import { at, runOperation } from '../context';
import { HANDWRITTEN_READS } from './reads';
import { camel, operationInput, operationPayload, pascal } from './zod-graphql';

/** GraphQL field names of catalog operations; others are named after the operation (`memories.restore` → `memoriesRestore`). */
export const FIELD_NAMES: Readonly<Record<string, string>> = {
  'workspaces.create': 'createWorkspace',
  'workspaces.members.put': 'putWorkspaceMembers',
  'namespaces.create': 'createNamespace',
  'namespaces.update': 'updateNamespace',
  'namespaces.grants.put': 'putNamespaceGrants',
  'namespaces.grants.list': 'namespaceGrants',
  'evidence.create': 'createEvidence',
  'evidence.verify': 'verifyEvidence',
  'evidence.forget': 'forgetEvidence',
  'memories.create': 'createMemory',
  'memories.attest': 'attestMemory',
  'memories.correct': 'correctMemory',
  'memories.forget': 'forgetMemory',
  'installations.create': 'createInstallation',
  'installations.revoke': 'revokeInstallation',
  'credentials.create': 'createCredential',
  'credentials.revoke': 'revokeCredential',
  'installations.list': 'installations',
  'credentials.list': 'credentials',
  'changes.list': 'changes',

  'webhooks.create': 'createWebhook',
  'webhooks.delete': 'deleteWebhook',
  'webhooks.list': 'webhooks',
};

/** Names of nested input types, per operation and body key. */
const INPUT_NAMES: Readonly<Record<string, Record<string, string>>> = {
  'namespaces.grants.put': { grants: 'GrantInput' },
  'workspaces.members.put': { members: 'MemberInput' },
};

export const fieldNameOf = (operation: Operation) =>
  FIELD_NAMES[operation.name] ?? camel(operation.name.replace(/\./g, '_'));

/**
 * One field per catalog operation without a hand-written read field: writes become mutations,
 * other reads (recall, ...) queries. Each takes `input` (path ids, query and body fields of the
 * operation) and, for idempotent operations, `idempotencyKey`, and runs the operation through
 * `Domain.execute`, so validation, scopes, workspace selection (`X-Service-Workspace`),
 * idempotent replay and conflicts are those of `/v1`; a key used on `/v1` replays here too.
 */
export function registerCatalogFields(operations: readonly Operation[] = OPERATIONS): void {
  for (const operation of operations) {
    if (HANDWRITTEN_READS.has(operation.name)) continue;
    const fieldName = fieldNameOf(operation);
    const input = operationInput(`${pascal(fieldName)}Input`, operation.input, INPUT_NAMES[operation.name] ?? {});
    const payload = operationPayload(`${pascal(fieldName)}Payload`, operation.output);
    const define = (t: any) =>
      t.field({
        type: payload,
        nullable: true,
        description: `${operation.summary} (\`${operation.name}\`, ${operation.method} ${operation.path})`,
        args: {
          ...(input ? { input: t.arg({ type: input.type, required: input.required }) } : {}),
          ...(operation.idempotent
            ? {
                idempotencyKey: t.arg.string({
                  required: true,
                  description:
                    'The `Idempotency-Key` of `/v1`: a retry with the same key and input replays the answer.',
                }),
              }
            : {}),
        },
        resolve: async (_root: unknown, args: { input?: unknown; idempotencyKey?: string }, ctx: any) => {
          const raw = input ? input.split(args.input) : { params: {}, query: {}, body: undefined };
          const answer = await runOperation(
            ctx,
            operation,
            raw,
            operation.idempotent ? (args.idempotencyKey ?? null) : null,
          );
          const body = raw.body as Record<string, unknown> | undefined;
          const knownAt = typeof body?.known_at === 'number' ? body.known_at : END_OF_TIME;
          return at(answer, knownAt);
        },
      });
    if (operation.mutates) builder.mutationField(fieldName, define);
    else builder.queryField(fieldName, define);
  }
}
