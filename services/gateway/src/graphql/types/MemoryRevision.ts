import { atAll, atOrNull, boundedList } from '../context';
import { MemoryKindEnum, RevisionStatusEnum } from '../enums';
import { AttestationRef, EvidenceRef, InvalidationRef, MemoryRef, MemoryRevisionRef, NamespaceRef } from '../refs';

MemoryRevisionRef.implement({
  description:
    'One revision of a memory: valid time [validFrom, validTo) by record time [recordedAt, recordedUntil), as known at the read’s `known_at`.',
  fields: (t) => ({
    id: t.exposeID('id'),
    memoryId: t.exposeID('memory_id'),
    namespaceId: t.exposeID('namespace_id'),
    kind: t.expose('kind', { type: MemoryKindEnum }),
    generation: t.expose('generation', { type: 'SafeInt' }),
    text: t.exposeString('text'),
    status: t.expose('status', { type: RevisionStatusEnum }),
    validFrom: t.exposeFloat('valid_from'),
    validTo: t.exposeFloat('valid_to', { nullable: true }),
    recordedAt: t.exposeFloat('recorded_at'),
    recordedUntil: t.exposeFloat('recorded_until', { nullable: true }),
    evidenceIds: t.exposeIDList('evidence_ids'),
    supportRevisionIds: t.exposeIDList('support_revision_ids'),
    attestation: t.field({
      type: AttestationRef,
      nullable: true,
      resolve: (revision) => atOrNull(revision.attestation, revision.$knownAt),
    }),
    invalidation: t.field({
      type: InvalidationRef,
      nullable: true,
      resolve: (revision) => atOrNull(revision.invalidation, revision.$knownAt),
    }),
    memory: t.field({
      type: MemoryRef,
      nullable: true,
      description: 'The memory, with its generation as known at the read’s `known_at`.',
      resolve: async (revision, _args, ctx) =>
        atOrNull(await ctx.loaders.memory(revision.memory_id, revision.$knownAt), revision.$knownAt),
    }),
    namespace: t.field({
      type: NamespaceRef,
      nullable: true,
      resolve: async (revision, _args, ctx) =>
        atOrNull(await ctx.loaders.namespace(revision.namespace_id), revision.$knownAt),
    }),
    evidence: t.field({
      nullable: true,
      type: [EvidenceRef],
      description: 'The cited evidence the caller can read, as known then; purged evidence is left out.',
      complexity: boundedList(32),
      resolve: async (revision, _args, ctx) =>
        atAll(await ctx.loaders.evidenceList(revision.evidence_ids, revision.$knownAt), revision.$knownAt),
    }),
    supportRevisions: t.field({
      nullable: true,
      type: [MemoryRevisionRef],
      description: 'The supporting revisions the caller can read, as known then; purged ones are left out.',
      complexity: boundedList(32),
      resolve: async (revision, _args, ctx) =>
        atAll(await ctx.loaders.revisionList(revision.support_revision_ids, revision.$knownAt), revision.$knownAt),
    }),
  }),
});
