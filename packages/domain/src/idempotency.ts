import { idSchema, type Operation } from '@tms/catalog';
import type { IdempotencyRecord, KeyScope } from '@tms/ledger';
import type { Caller } from './caller';
import { canonicalJson } from './canonical-json';
import { DomainError } from './errors';
import { sha256Hex } from './present';
import type { OperationResult } from './request';
import { nowSeconds } from './temporal';

// The idempotency rules of a write (decisions §8): the key it must carry, the fingerprint its
// stored answer is compared by, the replay of that answer, and the record of a new one.

export function checkIdempotencyKey(key: string | null): string {
  if (key === null) throw new DomainError('idempotency_required');
  if (!idSchema.safeParse(key).success)
    throw new DomainError(
      'invalid_input',
      'Idempotency-Key: must be 1-200 characters of A-Z, a-z, 0-9, ".", "_", ":", "-"',
    );
  return key;
}

/** A credential bound to one workspace keeps its keys there; anyone else's key holds in every workspace. */
export function keyScopeOf(caller: Caller): KeyScope {
  return caller.boundWorkspaceId === null ? 'principal' : 'workspace';
}

/** What a stored answer must have been asked with to be replayed: the operation, its input and its workspace. */
export function fingerprintOf(operation: Operation, input: Record<string, unknown>, workspaceScope: string): string {
  return sha256Hex(canonicalJson([operation.name, input, workspaceScope]));
}

/**
 * The answer stored under the write's key, replayed byte for byte: `idempotency_conflict` when the
 * key was used for another request, `not_found` when a purge blanked the answer (what it showed no
 * longer exists).
 */
export function replayOf(stored: IdempotencyRecord, fingerprint: string): OperationResult {
  if (stored.fingerprint !== fingerprint) throw new DomainError('idempotency_conflict');
  if (stored.body === '') throw new DomainError('not_found', 'replayed answer was purged');
  return { json: stored.body, replayed: true };
}

/** A write's answer as its idempotency record keeps it. */
export interface AnsweredWrite {
  operation: Operation;
  caller: Caller;
  key: string;
  fingerprint: string;
  workspaceScope: string;
  /** The ledger ids the answer shows (a purge of one of them blanks the record). */
  shown: ReadonlySet<string>;
}

/** The idempotency record of a write's answer. */
export function recordOf(write: AnsweredWrite, answer: object, json: string): IdempotencyRecord {
  return {
    subjectIds: [...write.shown],
    workspaceId: write.workspaceScope,
    principal: write.caller.principal,
    key: write.key,
    operation: write.operation.name,
    fingerprint: write.fingerprint,
    status: 200,
    // A secret is shown once: the stored answer (and so any replay) holds null instead.
    body: write.operation.revealsSecret ? JSON.stringify({ ...answer, secret: null }) : json,
    createdAt: nowSeconds(),
  };
}
