import crypto from 'node:crypto';
import { OPERATIONS_BY_NAME, type Operation, type OperationName, type OperationOutput } from '@tms/catalog';
import { composeDomain } from '@tms/composition';
import type { Domain, RawInput } from '@tms/domain';
import type { Ledger } from '@tms/ledger';
import type { CliEnv } from './env';

/** What a command prints: `stdout` is the one value a script captures, `note` goes to stderr. */
export interface AdminOutput {
  stdout: string;
  note?: string;
  /** Set when the command failed after printing what it must not lose (a secret): exit 1 with it. */
  failure?: string;
  /** The exit code of that failure when it is not 1 (`svc import`: lines were rejected). */
  exitCode?: number;
}

type AnswerOf<Name extends OperationName> = OperationOutput<Extract<Operation, { name: Name }>>;

/** An operation's answer, and whether it replays the first answer of its idempotency key. */
export interface OperatorAnswer<Name extends OperationName> {
  answer: AnswerOf<Name>;
  replayed: boolean;
}

/**
 * Run catalog operations as the operator (`urn:tms:operator`, subject `$USER`), through the
 * domain layer: the same validation, rules, ledger commit and idempotency record as the `/v1`
 * route of each. `workspaceId` is null for a directory operation (`workspaces.create`); a write
 * without `idempotencyKey` gets a fresh one.
 */
export type RunAsOperator = <Name extends OperationName>(
  name: Name,
  workspaceId: string | null,
  raw: Partial<RawInput>,
  idempotencyKey?: string,
) => Promise<OperatorAnswer<Name>>;

/** One domain for the whole command (the ledger opened once), however many operations it runs. */
export async function withOperator<T>(
  env: CliEnv,
  use: (run: RunAsOperator, ledger: Ledger, domain: Domain) => Promise<T>,
): Promise<T> {
  // Administration never searches: compose without a provider (no index is prepared). One
  // command per process: its rate limit is counted in process, without a Redis connection.
  const composed = await composeDomain(env, { holder: 'svc admin', search: false, rateLimitsInProcess: true });
  const { domain, ledger } = composed;
  try {
    // The embedded ledger was migrated in composing; a Postgres one must be already.
    await ledger.assertReady();
    const run: RunAsOperator = async (name, workspaceId, raw, idempotencyKey) => {
      const operation = OPERATIONS_BY_NAME.get(name);
      if (!operation) throw new Error(`operation ${name} missing from the catalog`);
      const result = await domain.executeAsOperator(
        operation,
        { params: raw.params ?? {}, query: raw.query ?? {}, body: raw.body },
        {
          workspaceId,
          operatorSubject: operatorSubject(env),
          idempotencyKey: operation.idempotent ? (idempotencyKey ?? freshIdempotencyKey()) : null,
        },
      );
      return { answer: JSON.parse(result.json), replayed: result.replayed };
    };
    return await use(run, ledger, domain);
  } finally {
    await composed.close();
  }
}

/** One operation as the operator (see `withOperator`); its answer. */
export async function asOperator<Name extends OperationName>(
  env: CliEnv,
  name: Name,
  workspaceId: string | null,
  raw: Partial<RawInput>,
  idempotencyKey: string | undefined,
): Promise<AnswerOf<Name>> {
  return withOperator(env, async (run) => (await run(name, workspaceId, raw, idempotencyKey)).answer);
}

/** The operator's subject (`urn:tms:operator`): the login running the command. */
export function operatorSubject(env: CliEnv): string {
  return env.USER ?? 'operator';
}

export function freshIdempotencyKey(): string {
  return `cli-${crypto.randomBytes(12).toString('hex')}`;
}

/**
 * The key of a later step of a command that writes more than once: derived from the command's
 * own key, so that a rerun with that key replays every step it already took.
 */
export function stepKey(idempotencyKey: string | undefined, step: string): string | undefined {
  return idempotencyKey === undefined ? undefined : `${idempotencyKey}:${step}`;
}

/** The options every workspace-scoped admin command takes. */
export interface WorkspaceOptions {
  workspace: string;
  idempotencyKey?: string;
}
