import { MemoryDeletionReceiptRef } from '../refs';

MemoryDeletionReceiptRef.implement({
  description: 'Proof of a memory purge: what was erased, by hash only.',
  fields: (t) => ({
    id: t.exposeID('id'),
    memoryId: t.exposeID('memory_id'),
    namespaceId: t.exposeID('namespace_id'),
    mode: t.exposeString('mode'),
    revisionIds: t.exposeIDList('revision_ids'),
    erasedTextSha256: t.exposeStringList('erased_text_sha256'),
    erasedKeySha256: t.string({
      nullable: true,
      description: 'The SHA-256 of the erased key; null when the memory had none (`/v1` then leaves the field out).',
      resolve: (receipt) => receipt.erased_key_sha256 ?? null,
    }),
    recorderActorId: t.exposeID('recorder_actor_id'),
    recordedAt: t.exposeFloat('recorded_at'),
  }),
});
