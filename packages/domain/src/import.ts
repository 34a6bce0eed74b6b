import {
  type ErrorCode,
  IMPORT_EVIDENCE_KEY_SUFFIX,
  importExtrasSchema,
  type memoriesCreate,
  type OperationOutput,
} from '@tms/catalog';
import type { EvidenceRow, Stores } from '@tms/ledger';
import { canonicalJson } from './canonical-json';
import { describeIssues, invalidInput } from './error-detail';
import { DomainError } from './errors';
import type { GroupedWrite, GroupResult, PreparedStep, PreparedWrite } from './group-commit';
import { sha256Hex } from './present';
import { keyClaimOf } from './services/memories';
import { decodeJsonBytes } from './strict-json';

/**
 * Bulk import (`svc import`, docs/import.md). Each line is a `memories.create` body, optionally
 * with the `evidence` its memory cites (an `evidence.create` body without the namespace, which
 * the memory gives it) and an `import_key`. A line is one unit: its evidence and its memory
 * commit in one transaction or not at all, each with its own commit and idempotency record, as
 * if `evidence.create` and then `memories.create` (citing it) had been called one after the
 * other under the line's key (`<import_key>:evidence` and `<import_key>`).
 */

/** Lines committed together in one transaction at most (a batch's rows stay in one statement's parameters). */
export const IMPORT_BATCH_SIZE = 256;

/** Where a line's memory cites the line's evidence until its id is known (a valid, unused id). */
const LINE_EVIDENCE = 'ev_of_the_imported_line';

/** A line as parsed: its key and the two bodies, still unvalidated. */
export interface ImportLine {
  /** The line's idempotency key: its `import_key`, else derived from the workspace and the line. */
  key: string;
  /** The `memories.create` body. */
  memory: Record<string, unknown>;
  /** The `evidence.create` body without `namespace_id`, or null. */
  evidence: Record<string, unknown> | null;
}

/** What became of a line: committed now, committed by an earlier run (replayed), or rejected with the service's error. */
export type ImportOutcome =
  | { status: 'committed' | 'replayed'; memoryId: string; sequence: number }
  | { status: 'rejected'; code: ErrorCode; detail: string | null };

/**
 * One line of the import file, as its bytes: exact UTF-8 and strict JSON, as a request body
 * (no duplicate key, no unpaired surrogate, nothing replaced by U+FFFD).
 */
export function parseImportLine(bytes: Uint8Array, workspaceId: string): ImportLine {
  return importLineOf(decodeJsonBytes(bytes, 'line'), workspaceId);
}

/**
 * A line's JSON value: an object whose `import_key` and `evidence` are valid; the rest is its
 * `memories.create` body. A line without `import_key` gets `line-<SHA-256 of the workspace and
 * the line's canonical JSON>`: the same line imports once into a workspace however often it is
 * run (or repeated in the file).
 */
export function importLineOf(value: unknown, workspaceId: string): ImportLine {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw invalidInput('line: must be a JSON object (a memories.create body)');
  }
  const { import_key: importKey, evidence, ...memory } = value as Record<string, unknown>;
  const extras: Record<string, unknown> = {};
  if (importKey !== undefined) extras.import_key = importKey;
  if (evidence !== undefined) extras.evidence = evidence;
  const parsed = importExtrasSchema.safeParse(extras);
  if (!parsed.success) throw invalidInput(describeIssues('body', parsed.error.issues, extras));
  return {
    key: parsed.data.import_key ?? `line-${sha256Hex(canonicalJson([workspaceId, value]))}`,
    memory,
    evidence: evidence === undefined ? null : (evidence as Record<string, unknown>),
  };
}

/** The outcome of a line the service refused (a rule, a conflict, bad input). */
export function rejectedOutcome(error: DomainError): ImportOutcome {
  return { status: 'rejected', code: error.code, detail: error.detail ?? null };
}

/** A line's outcome from its memory's answer. */
export function committedOutcome(result: GroupResult): ImportOutcome {
  const answer = (result.value ?? JSON.parse(result.json)) as OperationOutput<typeof memoriesCreate>;
  return {
    status: result.replayed ? 'replayed' : 'committed',
    memoryId: answer.memory.id,
    sequence: answer.commit.sequence,
  };
}

/** One step of a line: an operation's validated input under its idempotency key. */
export interface ImportStep {
  operation: 'evidence.create' | 'memories.create';
  input: Record<string, unknown>;
  key: string;
}

/** What the domain lends a line's unit: its steps run as any write of theirs would run. */
export interface ImportStepRunner {
  /** The caller's principal (the name its idempotency keys are locked under). */
  principal: string;
  /** A body validated as the operation's (the `invalid_input` of a request with it). */
  validate(operation: ImportStep['operation'], body: unknown): Record<string, unknown>;
  /** Phase one of a step on a batch's transaction (`Executor.prepareStep`). */
  prepare(step: ImportStep, stores: Stores): Promise<PreparedStep>;
  /** A step on an open transaction (`Executor.writeIn`). */
  writeIn(stores: Stores, step: ImportStep): Promise<GroupResult>;
  /** A transaction of its own (retried once when a concurrent writer won a race on a unique key). */
  transaction<T>(fn: (stores: Stores) => Promise<T>): Promise<T>;
}

/**
 * A line as one grouped write: its evidence step (if any), then its memory step citing that
 * evidence, committed together with consecutive sequences (evidence first). The memory body is
 * validated with the evidence id added, as the client would have sent it.
 */
export function importUnit(line: ImportLine, runner: ImportStepRunner): GroupedWrite {
  const memoryBody = line.memory;
  const cited = memoryBody.evidence_ids;
  // Validated once, before anything runs (a bad line never takes part in a batch), with a stand-in
  // for the evidence's id where the client would have put it: last among those it cites.
  const withEvidence = line.evidence !== null && (cited === undefined || Array.isArray(cited));
  const memoryInput = runner.validate(
    'memories.create',
    withEvidence
      ? { ...memoryBody, evidence_ids: [...((cited as unknown[] | undefined) ?? []), LINE_EVIDENCE] }
      : memoryBody,
  );
  const namespaceId = memoryInput.namespace_id as string;
  const evidenceStep: ImportStep | null = line.evidence
    ? {
        operation: 'evidence.create',
        input: runner.validate('evidence.create', { ...line.evidence, namespace_id: namespaceId }),
        key: `${line.key}${IMPORT_EVIDENCE_KEY_SUFFIX}`,
      }
    : null;
  const memoryStep = (evidenceId: string | null): ImportStep => {
    const ids = memoryInput.evidence_ids as string[];
    // Existing evidence the line cites already is cited once.
    const evidenceIds = ids.includes(evidenceId ?? '')
      ? ids.filter((id) => id !== LINE_EVIDENCE)
      : ids.map((id) => (id === LINE_EVIDENCE ? (evidenceId as string) : id));
    return { operation: 'memories.create', input: { ...memoryInput, evidence_ids: evidenceIds }, key: line.key };
  };
  const evidenceClaim = evidenceStep
    ? `evidence\u001f${namespaceId}\u001f${evidenceStep.input.content_root_sha256 as string}`
    : null;
  return {
    deadline: null,
    idempotencyKeys: [evidenceStep?.key, line.key].flatMap((key) =>
      key === undefined ? [] : [`${runner.principal}\u001f${key}`],
    ),
    // A batch's writes do not see each other's rows: a second line with the same memory key, or
    // creating the same evidence, waits for the next batch (where it meets the first's rows).
    claims: [keyClaimOf(memoryInput), evidenceClaim].filter((claim) => claim !== null),
    alone: () =>
      runner.transaction(async (stores) => {
        const evidence = evidenceStep ? await ofEvidence(runner.writeIn(stores, evidenceStep)) : null;
        return runner.writeIn(stores, memoryStep(evidence ? evidenceIdOf(evidence.json) : null));
      }),
    prepare: (stores) => prepareUnit(stores, runner, evidenceStep, memoryStep),
  };
}

async function prepareUnit(
  stores: Stores,
  runner: ImportStepRunner,
  evidenceStep: ImportStep | null,
  memoryStep: (evidenceId: string | null) => ImportStep,
): Promise<PreparedWrite> {
  let evidence: PreparedStep | null = null;
  try {
    let evidenceId: string | null = null;
    let memoryStores = stores;
    if (evidenceStep) {
      evidence = await ofEvidence(runner.prepare(evidenceStep, stores));
      if (evidence.kind === 'answered') evidenceId = evidenceIdOf(evidence.result.json);
      else if (evidence.commit) {
        // New evidence, written only when the batch commits: the memory's rules see it as the
        // row it will be (its stamp aside), as they would after `evidence.create` answered.
        evidenceId = evidence.commit.subjectIds[0] as string;
        memoryStores = seeingEvidence(stores, provisionalEvidence(evidenceId, evidenceStep, evidence.commit.actorId));
      } else evidenceId = ((await evidence.answer) as { evidence: { id: string } }).evidence.id;
    }
    const memory = await runner.prepare(memoryStep(evidenceId), memoryStores);
    const pending = evidence?.kind === 'committing' ? evidence : null;
    if (memory.kind === 'answered') {
      // Replayed: its evidence was the evidence's replay or the existing evidence; nothing is written.
      pending?.abandon(new DomainError('internal', 'the line was replayed'));
      return memory;
    }
    return {
      kind: 'committing',
      commits: [pending?.commit ?? null, memory.commit].filter((commit) => commit !== null),
      finish: async (stamps, collector) => {
        let next = 0;
        if (pending) await pending.finish(pending.commit ? (stamps[next++] ?? null) : null, collector);
        return memory.finish(memory.commit ? (stamps[next++] ?? null) : null, collector);
      },
      abandon: (error) => {
        pending?.abandon(error);
        memory.abandon(error);
      },
    };
  } catch (error) {
    if (evidence?.kind === 'committing') evidence.abandon(error);
    throw error;
  }
}

/**
 * The evidence step's answer; its rule's `invalid_input` names the field where the line has it
 * (`body.evidence.content_root_sha256`, not the `evidence.create` body's `body.content_root_sha256`).
 */
async function ofEvidence<T>(step: Promise<T>): Promise<T> {
  try {
    return await step;
  } catch (error) {
    if (error instanceof DomainError && error.code === 'invalid_input' && error.detail?.startsWith('body.')) {
      throw new DomainError(error.code, `body.evidence.${error.detail.slice('body.'.length)}`);
    }
    throw error;
  }
}

function evidenceIdOf(json: string): string {
  return (JSON.parse(json) as { evidence: { id: string } }).evidence.id;
}

/** The evidence row a step is about to write, before its commit stamp is known. */
function provisionalEvidence(id: string, step: ImportStep, actorId: string): EvidenceRow {
  const input = step.input as {
    namespace_id: string;
    source_locator: string;
    content_root_sha256: string;
    excerpt: string;
  };
  return {
    workspaceId: '',
    id,
    namespaceId: input.namespace_id,
    sourceLocator: input.source_locator,
    contentRootSha256: input.content_root_sha256,
    excerpt: input.excerpt,
    excerptSha256: input.content_root_sha256,
    recorderActorId: actorId,
    recordedAt: 0,
    commitSequence: 0,
    purgedAt: null,
  };
}

/** The stores, with `evidence.getMany` also finding one row not written yet. */
function seeingEvidence(stores: Stores, row: EvidenceRow): Stores {
  const evidence: Stores['evidence'] = Object.create(stores.evidence);
  evidence.getMany = async (workspaceId, ids) => {
    const others = ids.filter((id) => id !== row.id);
    const found = others.length > 0 ? await stores.evidence.getMany(workspaceId, others) : [];
    return ids.includes(row.id) ? [{ ...row, workspaceId }, ...found] : found;
  };
  const copy: Stores = Object.assign(Object.create(Object.getPrototypeOf(stores)), stores);
  Object.defineProperty(copy, 'evidence', { value: evidence });
  return copy;
}
