import { type Embedder, type EmbedderModel, EmbedderUnavailableError } from './embedder';

/**
 * `EMBEDDER=none`: the semantic arm is off by configuration (recall reports `semantic: "off"`, not
 * degraded; the indexer stores no vectors). Asking it for vectors is a mistake of the caller.
 */
export class NoEmbedder implements Embedder {
  readonly kind = 'none';
  readonly model = 'none';
  readonly dimensions = 0;

  async ready(): Promise<EmbedderModel> {
    throw new EmbedderUnavailableError('the semantic arm is off (EMBEDDER=none)');
  }

  async embed(_texts: readonly string[], _purpose: 'document' | 'query'): Promise<Float32Array[]> {
    throw new EmbedderUnavailableError('the semantic arm is off (EMBEDDER=none)');
  }

  async close(): Promise<void> {}
}
