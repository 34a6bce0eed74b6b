import { MEMORY_KINDS, OPERATIONS, revisionSchema, verdictSchema } from '@tms/catalog';
import { type CommitDigestInput, commitDigest, type DigestRecord, nextChainHash } from './chain';

/**
 * Which record of a broken commit changed, and which field. The chain keeps one hash per commit,
 * not its digest input, so a changed field is found by putting back each value it could have had:
 * the value the commit itself implies (its time, sequence, actor), another record's value of the
 * same field, another value of a closed set (a verdict, a status, a kind), or null. When one value
 * put back gives the stored chain hash again, that field is the one that changed, and the value
 * put back is what the chain recorded. A free value (a text's hash, a valid time, a list) cannot
 * be guessed: an export taken before (`svc export`) holds the digest input to compare with.
 */

/** A field of a commit (`kind: "commit"`) or of a record it names that differs from what the chain recorded. */
export interface ChangedField {
  kind: string;
  id: string;
  field: string;
  /** What the chain recorded; absent when it cannot be known (the row alone shows the change). */
  recorded?: unknown;
  /** What the rows hold now (absent: the record is missing). */
  found?: unknown;
}

const TIME_FIELDS: ReadonlySet<string> = new Set(['created_at', 'recorded_at', 'attestation_recorded_at']);
const ACTOR_FIELDS: ReadonlySet<string> = new Set([
  'actor_id',
  'created_by',
  'recorder_actor_id',
  'verifier_actor_id',
  'attestation_verifier_actor_id',
]);

/** Fields whose values come from a closed set. */
const CLOSED_SETS: Readonly<Record<string, readonly unknown[]>> = {
  verdict: verdictSchema.options,
  status: revisionSchema.shape.status.options,
  memory_kind: MEMORY_KINDS,
  credential_kind: ['installation', 'service_key'],
  subject_kind: ['memory', 'evidence'],
};

const MUTATING_OPERATIONS: readonly string[] = OPERATIONS.filter((op) => op.mutates).map((op) => op.name);

const same = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b);

/** Every value a field takes anywhere in the commit (its records' same-named fields), deduplicated. */
function valuesOf(input: CommitDigestInput, fields: ReadonlySet<string>): unknown[] {
  const values: unknown[] = [];
  const add = (value: unknown) => {
    if (value !== undefined && !values.some((v) => same(v, value))) values.push(value);
  };
  for (const record of input.records) {
    for (const [field, value] of Object.entries(record)) if (fields.has(field)) add(value);
  }
  return values;
}

/** The values a record's field could have been recorded with (see the file's comment). */
function candidatesFor(field: string, record: DigestRecord, input: CommitDigestInput): unknown[] {
  const candidates: unknown[] = [...valuesOf(input, new Set([field])), null, ...(CLOSED_SETS[field] ?? [])];
  if (TIME_FIELDS.has(field)) candidates.push(input.recorded_at, ...valuesOf(input, TIME_FIELDS));
  if (ACTOR_FIELDS.has(field)) candidates.push(input.actor_id, ...valuesOf(input, ACTOR_FIELDS));
  if (field === 'commit_sequence') candidates.push(input.sequence);
  // An attested claim keeps the hash of the text it attested.
  if (field === 'text_sha256' && typeof record.claim_sha256 === 'string') candidates.push(record.claim_sha256);
  return candidates.filter((value, i) => candidates.findIndex((v) => same(v, value)) === i);
}

/** The one field whose value put back gives `stored` again, or null. */
export function guessChangedField(previous: string, input: CommitDigestInput, stored: string): ChangedField | null {
  const chainsTo = (candidate: CommitDigestInput) => nextChainHash(previous, commitDigest(candidate)) === stored;
  const commitCandidates: Record<'recorded_at' | 'actor_id' | 'operation', unknown[]> = {
    recorded_at: valuesOf(input, TIME_FIELDS),
    actor_id: valuesOf(input, ACTOR_FIELDS),
    operation: [...MUTATING_OPERATIONS],
  };
  for (const [field, candidates] of Object.entries(commitCandidates) as [keyof typeof commitCandidates, unknown[]][]) {
    for (const value of candidates) {
      if (!same(value, input[field]) && chainsTo({ ...input, [field]: value })) {
        return { kind: 'commit', id: String(input.sequence), field, recorded: value, found: input[field] };
      }
    }
  }
  for (const [index, record] of input.records.entries()) {
    if (record.missing) continue;
    for (const field of Object.keys(record)) {
      if (field === 'id' || field === 'kind') continue;
      for (const value of candidatesFor(field, record, input)) {
        if (same(value, record[field])) continue;
        const records = [...input.records];
        records[index] = { ...record, [field]: value };
        if (chainsTo({ ...input, records })) {
          return { kind: record.kind ?? 'record', id: record.id, field, recorded: value, found: record[field] };
        }
      }
    }
  }
  return null;
}

/** Every field in which `found` differs from `recorded` (an export's digest input of the same commit). */
export function diffDigestInputs(recorded: CommitDigestInput, found: CommitDigestInput): ChangedField[] {
  const changed: ChangedField[] = [];
  const commitId = String(found.sequence);
  for (const field of ['recorded_at', 'actor_id', 'operation', 'workspace_id'] as const) {
    if (!same(recorded[field], found[field])) {
      changed.push({ kind: 'commit', id: commitId, field, recorded: recorded[field], found: found[field] });
    }
  }
  const recordedIds = recorded.records.map((r) => r.id);
  const foundIds = found.records.map((r) => r.id);
  if (!same(recordedIds, foundIds)) {
    changed.push({ kind: 'commit', id: commitId, field: 'subject_ids', recorded: recordedIds, found: foundIds });
  }
  const foundById = new Map(found.records.map((r) => [r.id, r]));
  for (const before of recorded.records) {
    const now = foundById.get(before.id);
    if (!now) continue;
    const kind = before.kind ?? 'record';
    if (now.missing && !before.missing) {
      changed.push({ kind, id: before.id, field: 'row', recorded: 'present' });
      continue;
    }
    for (const field of new Set([...Object.keys(before), ...Object.keys(now)])) {
      if (!same(before[field], now[field])) {
        changed.push({ kind, id: before.id, field, recorded: before[field], found: now[field] });
      }
    }
  }
  return changed;
}

/** A value as a reason shows it: JSON, a long one shortened. */
function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? 'nothing';
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** `verification vf_1: verdict is "rejected", the chain recorded "verified"`. */
export function describeChange(change: ChangedField, recordedBy = 'the chain recorded'): string {
  const what = change.kind === 'commit' ? `commit ${change.id}` : `${change.kind} ${change.id}`;
  if (change.field === 'row') return `${what} is missing`;
  if (!('recorded' in change)) return `${what}: ${change.field} changed`;
  return `${what}: ${change.field} is ${shown(change.found)}, ${recordedBy} ${shown(change.recorded)}`;
}

/**
 * Why a commit no longer gives its stored chain hash, naming the record and field: from an
 * earlier copy of its digest input when one is given (and proven by chaining to the stored
 * hash), else from the rows (a missing record, a text that no longer hashes to its stored
 * hash, or a guessed field), else the records it names.
 */
export function explainBrokenCommit(
  previous: string,
  input: CommitDigestInput,
  stored: string,
  recorded?: CommitDigestInput,
): { reason: string; changed: ChangedField[] } {
  const head = `commit ${input.sequence} no longer matches its chain hash`;
  if (recorded && nextChainHash(previous, commitDigest(recorded)) === stored) {
    const changed = diffDigestInputs(recorded, input);
    if (changed.length > 0) {
      return { reason: `${head}: ${changed.map((c) => describeChange(c, 'the export recorded')).join('; ')}`, changed };
    }
  }
  const missing: ChangedField[] = input.records
    .filter((r) => r.missing)
    .map((r) => ({ kind: r.kind ?? 'record', id: r.id, field: 'row', recorded: 'present' }));
  if (missing.length > 0) {
    return { reason: `${head}: ${missing.map((c) => describeChange(c)).join('; ')}`, changed: missing };
  }
  // A kept text whose stored hash no longer matches it (the chain's record, see keptTextHash).
  const rehashed: ChangedField[] = input.records.flatMap((record) =>
    Object.entries(record)
      .filter(([, value]) => typeof value === 'string' && value.startsWith('mismatch:'))
      .map(([field]) => ({ kind: record.kind ?? 'record', id: record.id, field: field.replace(/_sha256$/, '') })),
  );
  if (rehashed.length > 0) {
    const texts = rehashed.map(
      (c) => `${c.kind} ${c.id}: its ${c.field} no longer hashes to its stored ${c.field}_sha256`,
    );
    return { reason: `${head}: ${texts.join('; ')}`, changed: rehashed };
  }
  const guessed = guessChangedField(previous, input, stored);
  if (guessed) return { reason: `${head}: ${describeChange(guessed)}`, changed: [guessed] };
  const named = input.records.map((r) => `${r.kind ?? 'record'} ${r.id}`).join(', ');
  return {
    reason: `${head}: a field of the commit or of a record it names (${named}) changed; the rows alone cannot tell which (an export taken before can: svc ledger verify --workspace W --file EXPORT)`,
    changed: [],
  };
}
