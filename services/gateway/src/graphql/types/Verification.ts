import { atOrNull } from '../context';
import { VerdictEnum } from '../enums';
import { EvidenceRef, VerificationRef } from '../refs';

VerificationRef.implement({
  description: 'A verdict on evidence, recorded after both expected hashes matched the ledger.',
  fields: (t) => ({
    id: t.exposeID('id'),
    evidenceId: t.exposeID('evidence_id'),
    contentRootSha256: t.exposeString('content_root_sha256'),
    excerptSha256: t.exposeString('excerpt_sha256'),
    verdict: t.expose('verdict', { type: VerdictEnum }),
    verifierActorId: t.exposeID('verifier_actor_id'),
    recordedAt: t.exposeFloat('recorded_at'),
    evidence: t.field({
      type: EvidenceRef,
      nullable: true,
      description: 'The verified evidence; null once purged or when unreadable.',
      resolve: async (v, _args, ctx) => atOrNull(await ctx.loaders.evidence(v.evidence_id, v.$knownAt), v.$knownAt),
    }),
  }),
});
