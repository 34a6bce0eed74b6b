import { EvidenceDeletionReceiptRef } from '../refs';

EvidenceDeletionReceiptRef.implement({
  description: 'Proof of an evidence purge: what was erased, by hash only.',
  fields: (t) => ({
    id: t.exposeID('id'),
    evidenceId: t.exposeID('evidence_id'),
    namespaceId: t.exposeID('namespace_id'),
    mode: t.exposeString('mode'),
    erasedExcerptSha256: t.exposeString('erased_excerpt_sha256'),
    recorderActorId: t.exposeID('recorder_actor_id'),
    recordedAt: t.exposeFloat('recorded_at'),
  }),
});
