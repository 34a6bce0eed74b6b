import type { CallbackManagerForRetrieverRun } from '@langchain/core/callbacks/manager';
import { Document } from '@langchain/core/documents';
import { BaseRetriever, type BaseRetrieverInput } from '@langchain/core/retrievers';
import type { RecallOutput, TmsClient } from '@tms/client';

type Revision = RecallOutput['items'][number]['revision'];

/** What a retrieved Document's metadata says about the memory and the answer it came from. */
export interface TmsDocumentMetadata {
  memoryId: string;
  revisionId: string;
  /** The namespace holding the memory. */
  namespaceId: string;
  key: string | null;
  kind: Revision['kind'];
  generation: number;
  /** Valid time: when the memory holds in the world (Unix seconds; `validTo` null when open). */
  validFrom: number;
  validTo: number | null;
  /** Record time: when the service believed this revision (Unix seconds; `recordedUntil` null while current). */
  recordedAt: number;
  recordedUntil: number | null;
  /** The fused score: comparable within one answer only. */
  score: number;
  /** Each arm's 1-based rank, null where that arm did not find the memory. */
  ranks: { lexical: number | null; semantic: number | null };
  stale: boolean;
  /** The answer's status: anything but `complete` means memories may be missing. */
  status: RecallOutput['status'];
  retrieval: RecallOutput['retrieval'];
}

export interface TmsRetrieverInput extends BaseRetrieverInput {
  /** A `@tms/client` client bound to a workspace. */
  client: TmsClient;
  /** The namespaces to recall from (with those below them). */
  namespaceIds: string[];
  /** At most this many Documents (recall's `max_items`, 1-100). Default 4. */
  k?: number;
  /** `hybrid` (default), `lexical` or `semantic`. */
  mode?: 'hybrid' | 'lexical' | 'semantic';
  /** What held at this time (Unix seconds); default now. */
  asOf?: number;
  /** As the service knew it at this time (Unix seconds); default now. */
  knownAt?: number;
}

/** A LangChain retriever over recall: one Document per recalled memory, best first. */
export class TmsRetriever extends BaseRetriever<TmsDocumentMetadata> {
  static override lc_name() {
    return 'TmsRetriever';
  }

  override lc_namespace = ['tms', 'retrievers'];

  private readonly client: TmsClient;
  readonly namespaceIds: string[];
  readonly k: number;
  readonly mode: TmsRetrieverInput['mode'];
  readonly asOf: number | undefined;
  readonly knownAt: number | undefined;

  constructor({ client, namespaceIds, k = 4, mode, asOf, knownAt, ...fields }: TmsRetrieverInput) {
    super(fields);
    this.client = client;
    this.namespaceIds = namespaceIds;
    this.k = k;
    this.mode = mode;
    this.asOf = asOf;
    this.knownAt = knownAt;
  }

  override async _getRelevantDocuments(
    query: string,
    _runManager?: CallbackManagerForRetrieverRun,
  ): Promise<Document<TmsDocumentMetadata>[]> {
    const answer = await this.client.recall({
      namespace_ids: this.namespaceIds,
      query,
      budget: { max_items: this.k },
      ...(this.mode ? { mode: this.mode } : {}),
      ...(this.asOf === undefined ? {} : { as_of: this.asOf }),
      ...(this.knownAt === undefined ? {} : { known_at: this.knownAt }),
    });
    return answer.items.map(
      ({ memory, revision, score, ranks, stale }) =>
        new Document<TmsDocumentMetadata>({
          id: memory.id,
          pageContent: revision.text,
          metadata: {
            memoryId: memory.id,
            revisionId: revision.id,
            namespaceId: revision.namespace_id,
            key: memory.key,
            kind: revision.kind,
            generation: revision.generation,
            validFrom: revision.valid_from,
            validTo: revision.valid_to,
            recordedAt: revision.recorded_at,
            recordedUntil: revision.recorded_until,
            score,
            ranks,
            stale,
            status: answer.status,
            retrieval: answer.retrieval,
          },
        }),
    );
  }
}
