import crypto from 'node:crypto';

/**
 * A small in-memory reference of the memory lifecycle (decisions §2-§4, docs/semantics.md),
 * written independently of the production code for the model-based test
 * `lifecycle.model.test.ts`. It stores everything "as known at the end of time" and derives
 * every read at (as_of, known_at) from the bitemporal rules:
 *
 * - a revision is the rectangle [valid_from, valid_to) x [recorded_at, recorded_until);
 * - at known_at K a memory's current revision is the one with recorded_at <= K < recorded_until;
 * - anything recorded after K (an end of record, an invalidation) is not shown at K;
 * - a purged memory or excerpt is suppressed at every K;
 * - a key is held by at most one memory of a namespace that is neither retracted nor purged.
 *
 * Times come from the server (each commit's `recorded_at`); the model never reads a clock.
 */

export type Kind = 'claim' | 'episode' | 'procedure';
export type ErrorCode = 'not_found' | 'conflict' | 'invalid_input';
export interface Stamp {
  sequence: number;
  recorded_at: number;
}

export interface Attestation {
  id: string;
  claim_text: string;
  claim_sha256: string;
  evidence_ids: string[];
  verification_ids: string[];
  verifier_actor_id: string;
  recorded_at: number;
}

export interface Invalidation {
  recorded_at: number;
  cause_revision_id: string;
  reason: 'support_corrected' | 'support_deleted';
}

/** A revision with everything ever recorded about it (the API shape, seen at the end of time). */
export interface Revision {
  id: string;
  memory_id: string;
  namespace_id: string;
  kind: Kind;
  generation: number;
  text: string;
  status: 'candidate' | 'asserted';
  valid_from: number;
  valid_to: number | null;
  recorded_at: number;
  recorded_until: number | null;
  evidence_ids: string[];
  support_revision_ids: string[];
  attestation: Attestation | null;
  invalidation: Invalidation | null;
}

export interface MemoryState {
  id: string;
  namespace_id: string;
  kind: Kind;
  /** The caller's own name for it (decisions §12), fixed at creation. */
  key: string | null;
  purged: boolean;
  /** Oldest generation first. */
  revisions: Revision[];
}

export interface Verification {
  id: string;
  evidence_id: string;
  content_root_sha256: string;
  excerpt_sha256: string;
  verdict: 'verified' | 'rejected';
  verifier_actor_id: string;
  recorded_at: number;
}

export interface EvidenceState {
  id: string;
  namespace_id: string;
  source_locator: string;
  excerpt: string;
  sha256: string;
  recorder_actor_id: string;
  recorded_at: number;
  purged: boolean;
  verifications: Verification[];
}

/** What the model expects of a read: `not_found`, or exactly this body. */
export type Expected<T> = { status: 404 } | { status: 200; body: T };

export const sha256 = (text: string) => crypto.createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex');

const isCurrentAt = (r: Revision, knownAt: number) =>
  r.recorded_at <= knownAt && (r.recorded_until === null || knownAt < r.recorded_until);
const isValidAt = (r: Revision, asOf: number) => r.valid_from <= asOf && (r.valid_to === null || asOf < r.valid_to);
const byId = <T extends { id: string }>(a: T, b: T) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** A revision as it was known at `knownAt`: later record ends, invalidations and attestations hidden. */
export function revisionAt(r: Revision, knownAt = Number.POSITIVE_INFINITY) {
  return {
    ...r,
    recorded_until: r.recorded_until !== null && r.recorded_until <= knownAt ? r.recorded_until : null,
    attestation: r.attestation && r.attestation.recorded_at <= knownAt ? r.attestation : null,
    invalidation: r.invalidation && r.invalidation.recorded_at <= knownAt ? r.invalidation : null,
  };
}

export class ReferenceLedger {
  readonly commits: Stamp[] = [];
  readonly memories = new Map<string, MemoryState>();
  readonly evidence = new Map<string, EvidenceState>();
  private tags = 0;

  constructor(
    readonly actorId: string,
    head: Stamp,
  ) {
    this.commits.push(head);
  }

  /** A fresh, unique text for a revision or an excerpt. */
  tag(prefix: string) {
    this.tags += 1;
    return `${prefix} ${this.tags}`;
  }

  get head(): Stamp {
    return this.commits.at(-1) as Stamp;
  }

  /** Record a commit; sequences are gap-free and recorded_at never goes backwards (decisions §1). */
  record(stamp: Stamp): number {
    const { sequence, recorded_at } = this.head;
    if (stamp.sequence !== sequence + 1) throw new Error(`commit ${stamp.sequence} after ${sequence}`);
    if (!(stamp.recorded_at >= recorded_at)) throw new Error(`recorded_at ${stamp.recorded_at} before ${recorded_at}`);
    this.commits.push(stamp);
    return stamp.recorded_at;
  }

  // Reads.

  /** The current revision at `knownAt` (the latest recorded by then and not yet ended). */
  current(m: MemoryState, knownAt: number): Revision | null {
    const live = m.revisions.filter((r) => isCurrentAt(r, knownAt));
    if (live.length > 1) throw new Error(`model: two current revisions of ${m.id} at ${knownAt}`);
    return live[0] ?? null;
  }

  /** The current revision now (record interval still open). */
  currentNow(m: MemoryState): Revision | null {
    return m.revisions.find((r) => r.recorded_until === null) ?? null;
  }

  generation(m: MemoryState, knownAt = Number.POSITIVE_INFINITY): number {
    return Math.max(0, ...m.revisions.filter((r) => r.recorded_at <= knownAt).map((r) => r.generation));
  }

  memoryOf(m: MemoryState, knownAt?: number) {
    return {
      id: m.id,
      namespace_id: m.namespace_id,
      kind: m.kind,
      generation: this.generation(m, knownAt),
      key: m.key,
    };
  }

  private visibleAt(m: MemoryState, asOf: number, knownAt: number): Revision | null {
    if (m.purged) return null;
    const r = this.current(m, knownAt);
    return r && isValidAt(r, asOf) ? r : null;
  }

  get(id: string, asOf: number, knownAt: number, includeEvidence: boolean): Expected<unknown> {
    const m = this.memories.get(id);
    const r = m && this.visibleAt(m, asOf, knownAt);
    if (!m || !r) return { status: 404 };
    const evidence = includeEvidence
      ? r.evidence_ids
          .map((e) => this.evidence.get(e))
          .filter((e): e is EvidenceState => e !== undefined && !e.purged && e.recorded_at <= knownAt)
      : [];
    const verifications = evidence
      .flatMap((e) => e.verifications)
      .filter((v) => v.recorded_at <= knownAt)
      .sort((a, b) => a.recorded_at - b.recorded_at || byId(a, b))
      .reverse()
      .slice(0, 32);
    return {
      status: 200,
      body: {
        view: {
          memory: this.memoryOf(m, knownAt),
          revision: revisionAt(r, knownAt),
          evidence: evidence.map((e) => ({
            id: e.id,
            namespace_id: e.namespace_id,
            source_locator: e.source_locator,
            content_root_sha256: e.sha256,
            excerpt: e.excerpt,
            excerpt_sha256: e.sha256,
            recorder_actor_id: e.recorder_actor_id,
            recorded_at: e.recorded_at,
          })),
          verifications,
          stale: r.invalidation !== null && r.invalidation.recorded_at <= knownAt,
        },
        as_of: asOf,
        known_at: knownAt,
      },
    };
  }

  history(id: string, knownAt: number): Expected<unknown> {
    const m = this.memories.get(id);
    const known = m && !m.purged ? m.revisions.filter((r) => r.recorded_at <= knownAt) : [];
    if (known.length === 0) return { status: 404 };
    const revisions = known.sort((a, b) => b.generation - a.generation).map((r) => revisionAt(r, knownAt));
    return { status: 200, body: { revisions, next_cursor: null } };
  }

  list(namespaceId: string, asOf: number, knownAt: number, kind?: Kind, key?: string): Expected<unknown> {
    const items = [...this.memories.values()]
      .filter(
        (m) =>
          m.namespace_id === namespaceId &&
          (kind === undefined || m.kind === kind) &&
          (key === undefined || m.key === key),
      )
      .sort(byId)
      .flatMap((m) => {
        const r = this.visibleAt(m, asOf, knownAt);
        if (!r) return [];
        const stale = r.invalidation !== null && r.invalidation.recorded_at <= knownAt;
        return [{ memory: this.memoryOf(m, knownAt), revision: revisionAt(r, knownAt), stale }];
      });
    return { status: 200, body: { items, next_cursor: null } };
  }

  // Rules a write must pass. Each returns the error codes it may answer (empty: it succeeds).

  /**
   * Evidence a new revision cites must exist and be unpurged, whether named or copied by a
   * correction. (For a copied, purged excerpt the answer is `not_found` although the memory
   * exists; neither decisions.md nor docs/semantics.md settles this case.)
   */
  evidenceErrors(ids: readonly string[]): ErrorCode[] {
    return ids.some((id) => this.evidence.get(id)?.purged !== false) ? ['not_found'] : [];
  }

  /**
   * Supporting revisions: named ones must exist and be unpurged (`not_found`), belong to another
   * memory (`invalid_input`) and still be current (`conflict`). Copied ones (a correction that
   * does not name supports) must still be current, else `conflict` (docs/semantics.md).
   */
  supportErrors(ids: readonly string[], own: string | null, copied = false): ErrorCode[] {
    const codes = new Set<ErrorCode>();
    for (const id of ids) {
      const r = this.revision(id);
      const purged = !r || (this.memories.get(r.memory_id)?.purged ?? true);
      if (purged) codes.add(copied ? 'conflict' : 'not_found');
      else if (r.memory_id === own) codes.add('invalid_input');
      else if (r.recorded_until !== null) codes.add('conflict');
    }
    return [...codes];
  }

  /** A create naming a key that a memory of the namespace, neither retracted nor purged, holds: `conflict`. */
  keyErrors(namespaceId: string, key: string | null): ErrorCode[] {
    if (key === null) return [];
    const held = [...this.memories.values()].some(
      (m) => m.namespace_id === namespaceId && m.key === key && !m.purged && this.currentNow(m) !== null,
    );
    return held ? ['conflict'] : [];
  }

  /** The addressed memory of a lifecycle write: unknown or purged is `not_found`, then the generation. */
  targetErrors(id: string, expectedGeneration: number, needsCurrent: boolean): ErrorCode[] | null {
    const m = this.memories.get(id);
    if (!m || m.purged) return ['not_found'];
    const codes: ErrorCode[] = [];
    if (this.generation(m) !== expectedGeneration) codes.push('conflict');
    if (needsCurrent && !this.currentNow(m)) codes.push('conflict');
    return codes.length ? codes : null;
  }

  revision(id: string): Revision | undefined {
    for (const m of this.memories.values()) {
      const r = m.revisions.find((x) => x.id === id);
      if (r) return r;
    }
    return undefined;
  }

  /**
   * The attestation a new revision earns (decisions §3): the caller holds `verify` (the test's
   * caller is the workspace admin), it cites evidence, and every item has a `verified` and no
   * `rejected` verification. It names each item's latest `verified` one.
   */
  earnedAttestation(evidenceIds: readonly string[]): { evidence_ids: string[]; verification_ids: string[] } | null {
    if (evidenceIds.length === 0) return null;
    const verificationIds: string[] = [];
    for (const id of evidenceIds) {
      const vs = this.evidence.get(id)?.verifications ?? [];
      if (vs.some((v) => v.verdict === 'rejected')) return null;
      const latest = vs.filter((v) => v.verdict === 'verified').at(-1);
      if (!latest) return null;
      verificationIds.push(latest.id);
    }
    return { evidence_ids: [...evidenceIds], verification_ids: verificationIds };
  }

  /** Current, unpurged, not yet invalidated revisions of other memories that list any of `causes`. */
  dependents(causes: readonly string[], except: string) {
    const found: { revision: Revision; cause: string }[] = [];
    for (const m of this.memories.values()) {
      if (m.purged || m.id === except) continue;
      const r = this.currentNow(m);
      const cause = r?.support_revision_ids.find((id) => causes.includes(id));
      if (r && cause && r.invalidation === null) found.push({ revision: r, cause });
    }
    return found.sort((a, b) => byId(a.revision, b.revision));
  }

  // Effects, applied once the server has committed (times and ids come from its answer).

  private invalidate(
    deps: { revision: Revision; cause: string }[],
    at: number,
    reason: Invalidation['reason'],
  ): string[] {
    for (const { revision, cause } of deps)
      revision.invalidation = { recorded_at: at, cause_revision_id: cause, reason };
    return deps.map((d) => d.revision.id);
  }

  addEvidence(e: Omit<EvidenceState, 'purged' | 'verifications' | 'recorded_at'>, stamp: Stamp): EvidenceState {
    const state = { ...e, recorded_at: this.record(stamp), purged: false, verifications: [] };
    this.evidence.set(e.id, state);
    return state;
  }

  addVerification(e: EvidenceState, id: string, verdict: Verification['verdict'], stamp: Stamp): Verification {
    const v: Verification = {
      id,
      evidence_id: e.id,
      content_root_sha256: e.sha256,
      excerpt_sha256: e.sha256,
      verdict,
      verifier_actor_id: this.actorId,
      recorded_at: this.record(stamp),
    };
    e.verifications.push(v);
    return v;
  }

  private newRevision(
    fields: Omit<Revision, 'recorded_at' | 'recorded_until' | 'attestation' | 'invalidation' | 'status'>,
    attestation: { id: string; evidence_ids: string[]; verification_ids: string[] } | null,
    at: number,
  ): Revision {
    return {
      ...fields,
      status: attestation ? 'asserted' : 'candidate',
      recorded_at: at,
      recorded_until: null,
      attestation: attestation && {
        id: attestation.id,
        claim_text: fields.text,
        claim_sha256: sha256(fields.text),
        evidence_ids: attestation.evidence_ids,
        verification_ids: attestation.verification_ids,
        verifier_actor_id: this.actorId,
        recorded_at: at,
      },
      invalidation: null,
    };
  }

  create(
    body: {
      namespace_id: string;
      kind: Kind;
      text: string;
      valid_from: number;
      valid_to: number | null;
      evidence_ids: string[];
      support_revision_ids: string[];
      key?: string;
    },
    ids: { memory: string; revision: string; attestation: string | null },
    stamp: Stamp,
  ): { memory: MemoryState; revision: Revision } {
    const at = this.record(stamp);
    const { key, ...fields } = body;
    const earned = this.earnedAttestation(body.evidence_ids);
    const revision = this.newRevision(
      { ...fields, id: ids.revision, memory_id: ids.memory, generation: 1 },
      earned && { id: ids.attestation ?? '(missing attestation id)', ...earned },
      at,
    );
    const memory: MemoryState = {
      id: ids.memory,
      namespace_id: body.namespace_id,
      kind: body.kind,
      key: key ?? null,
      purged: false,
      revisions: [revision],
    };
    this.memories.set(memory.id, memory);
    return { memory, revision };
  }

  /** Merge a correction into the current revision (unnamed fields are copied). */
  corrected(
    current: Revision,
    body: {
      text?: string;
      valid_from?: number;
      valid_to?: number | null;
      evidence_ids?: string[];
      support_revision_ids?: string[];
    },
  ) {
    return {
      text: body.text ?? current.text,
      valid_from: body.valid_from ?? current.valid_from,
      valid_to: body.valid_to !== undefined ? body.valid_to : current.valid_to,
      evidence_ids: body.evidence_ids ?? current.evidence_ids,
      support_revision_ids: body.support_revision_ids ?? current.support_revision_ids,
    };
  }

  /**
   * A new revision supersedes the current one: the old record interval ends at the commit and
   * current dependents of the old revision become stale (`support_corrected`).
   */
  supersede(
    m: MemoryState,
    fields: ReturnType<ReferenceLedger['corrected']>,
    attestation: { id: string; evidence_ids: string[]; verification_ids: string[] } | null,
    revisionId: string,
    stamp: Stamp,
  ): { revision: Revision; invalidated: string[] } {
    const current = this.currentNow(m);
    if (!current) throw new Error('model: superseding a retracted memory');
    const at = this.record(stamp);
    const deps = this.dependents([current.id], m.id);
    current.recorded_until = at;
    const revision = this.newRevision(
      {
        ...fields,
        id: revisionId,
        memory_id: m.id,
        namespace_id: m.namespace_id,
        kind: m.kind,
        generation: this.generation(m) + 1,
      },
      attestation,
      at,
    );
    m.revisions.push(revision);
    return { revision, invalidated: this.invalidate(deps, at, 'support_corrected') };
  }

  retract(m: MemoryState, stamp: Stamp): Revision {
    const current = this.currentNow(m);
    if (!current) throw new Error('model: retracting a retracted memory');
    const at = this.record(stamp);
    const deps = this.dependents([current.id], m.id);
    current.recorded_until = at;
    this.invalidate(deps, at, 'support_deleted');
    return current;
  }

  /** Erase every revision; current dependents of any of them become stale (`support_deleted`). */
  purge(m: MemoryState, stamp: Stamp) {
    const at = this.record(stamp);
    const ids = m.revisions.map((r) => r.id);
    this.invalidate(this.dependents(ids, m.id), at, 'support_deleted');
    m.purged = true;
    return at;
  }

  /** What a purge's receipt lists (also for a dry run). */
  receiptOf(m: MemoryState) {
    return {
      revision_ids: m.revisions.map((r) => r.id),
      erased_text_sha256: m.revisions.map((r) => sha256(r.text)),
      ...(m.key === null ? {} : { erased_key_sha256: sha256(m.key) }),
    };
  }

  purgeEvidence(e: EvidenceState, stamp: Stamp) {
    e.purged = true;
    return this.record(stamp);
  }

  /** Times worth probing: every commit, just before and just after it. */
  knownAtPoints(epsilon: number): number[] {
    return this.commits.flatMap((c) => [c.recorded_at - epsilon, c.recorded_at, c.recorded_at + epsilon]);
  }

  /** Valid times worth probing: every validity boundary, just before and after, and the last commit. */
  asOfPoints(epsilon: number): number[] {
    const bounds = new Set<number>();
    for (const m of this.memories.values()) {
      for (const r of m.revisions) {
        bounds.add(r.valid_from);
        if (r.valid_to !== null) bounds.add(r.valid_to);
      }
    }
    const points = [...bounds].sort((a, b) => a - b).flatMap((b) => [b - epsilon, b, b + epsilon]);
    return [...points, this.head.recorded_at];
  }
}
