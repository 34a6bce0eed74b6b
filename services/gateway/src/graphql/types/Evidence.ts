import { atAll, atOrNull, connectionOf } from '../context';
import { EvidenceRef, NamespaceRef, VerificationConnection } from '../refs';

EvidenceRef.implement({
  description: 'An exact source excerpt, deduplicated per namespace by its SHA-256.',
  fields: (t) => ({
    id: t.exposeID('id'),
    namespaceId: t.exposeID('namespace_id'),
    sourceLocator: t.exposeString('source_locator'),
    contentRootSha256: t.exposeString('content_root_sha256'),
    excerpt: t.exposeString('excerpt'),
    excerptSha256: t.exposeString('excerpt_sha256'),
    recorderActorId: t.exposeID('recorder_actor_id'),
    recordedAt: t.exposeFloat('recorded_at'),
    namespace: t.field({
      type: NamespaceRef,
      nullable: true,
      resolve: async (evidence, _args, ctx) =>
        atOrNull(await ctx.loaders.namespace(evidence.namespace_id), evidence.$knownAt),
    }),
    verifications: t.field({
      nullable: true,
      type: VerificationConnection,
      description:
        'Verifications of this evidence recorded by the read’s `known_at`, oldest first, 32 a page; `after` takes the cursor of `evidence.get`.',
      args: { after: t.arg.string() },
      complexity: { field: 1, multiplier: 32 },
      resolve: async (evidence, args, ctx) => {
        const page =
          !args.after && evidence.$page
            ? evidence.$page
            : await ctx.loaders.verifications(evidence, evidence.$knownAt, args.after ?? undefined);
        return connectionOf(atAll(page.verifications, evidence.$knownAt), page.next_cursor);
      },
    }),
  }),
});
