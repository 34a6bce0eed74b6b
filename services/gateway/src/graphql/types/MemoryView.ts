import { at, atAll, boundedList } from '../context';
import { EvidenceRef, MemoryRef, MemoryRevisionRef, MemoryViewRef, VerificationRef } from '../refs';

MemoryViewRef.implement({
  description:
    'A memory as it held at `asOf` and as known at `knownAt`. Selecting `evidence` or `verifications` reads them (`include_evidence`).',
  fields: (t) => ({
    memory: t.field({ type: MemoryRef, resolve: (view) => at(view.memory, view.$knownAt) }),
    revision: t.field({ type: MemoryRevisionRef, resolve: (view) => at(view.revision, view.$knownAt) }),
    evidence: t.field({
      type: [EvidenceRef],
      complexity: boundedList(32),
      resolve: (view) => atAll(view.evidence, view.$knownAt),
    }),
    verifications: t.field({
      type: [VerificationRef],
      description: 'Verifications of the shown evidence recorded by `knownAt`, newest first, at most 32.',
      complexity: boundedList(32),
      resolve: (view) => atAll(view.verifications, view.$knownAt),
    }),
    stale: t.exposeBoolean('stale'),
  }),
});
