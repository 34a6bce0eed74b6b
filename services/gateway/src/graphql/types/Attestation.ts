import { atAll, boundedList } from '../context';
import { AttestationRef, EvidenceRef, VerificationRef } from '../refs';

AttestationRef.implement({
  description: 'Why a revision is asserted: the claim, its SHA-256, and the verifications of its evidence.',
  fields: (t) => ({
    id: t.exposeID('id'),
    claimText: t.exposeString('claim_text'),
    claimSha256: t.exposeString('claim_sha256'),
    evidenceIds: t.exposeIDList('evidence_ids'),
    verificationIds: t.exposeIDList('verification_ids'),
    verifierActorId: t.exposeID('verifier_actor_id'),
    recordedAt: t.exposeFloat('recorded_at'),
    evidence: t.field({
      nullable: true,
      type: [EvidenceRef],
      complexity: boundedList(32),
      resolve: async (a, _args, ctx) => atAll(await ctx.loaders.evidenceList(a.evidence_ids, a.$knownAt), a.$knownAt),
    }),
    verifications: t.field({
      nullable: true,
      type: [VerificationRef],
      complexity: boundedList(32),
      resolve: async (a, _args, ctx) =>
        atAll(await ctx.loaders.verificationList(a.verification_ids, a.$knownAt), a.$knownAt),
    }),
  }),
});
