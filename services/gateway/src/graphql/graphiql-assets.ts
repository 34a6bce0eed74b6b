import { HashedAsset, loadOnce } from '../http/hashed-assets';

/** GraphiQL's scripts, stylesheet, workers and icon live under this prefix, named by content hash. */
export const GRAPHIQL_ASSETS_PATH = '/graphql/assets/';

/** Monaco's worker labels, as GraphiQL asks for them. */
export type WorkerLabel = 'editorWorkerService' | 'json' | 'graphql';

export class GraphiqlAssets {
  private readonly byFile: Map<string, HashedAsset>;

  private constructor(
    readonly script: HashedAsset,
    readonly stylesheet: HashedAsset,
    readonly icon: HashedAsset,
    readonly workers: Record<WorkerLabel, HashedAsset>,
  ) {
    this.byFile = new Map([script, stylesheet, icon, ...Object.values(workers)].map((asset) => [asset.file, asset]));
  }

  static async load(): Promise<GraphiqlAssets> {
    // GraphiQL's bundle as strings (~9 MB). Loaded on the first page view, not at start: a gateway
    // serving API traffic only should not carry it.
    const bundle = await import('@graphql-yoga/render-graphiql/graphiql');
    const text = (value: string) => Buffer.from(value, 'utf8');
    const javascript = 'text/javascript; charset=utf-8';
    return new GraphiqlAssets(
      new HashedAsset(GRAPHIQL_ASSETS_PATH, 'graphiql', 'js', javascript, text(bundle.js)),
      new HashedAsset(GRAPHIQL_ASSETS_PATH, 'graphiql', 'css', 'text/css; charset=utf-8', text(bundle.css)),
      iconFromDataUrl(bundle.favicon),
      {
        editorWorkerService: new HashedAsset(
          GRAPHIQL_ASSETS_PATH,
          'editor-worker',
          'js',
          javascript,
          text(bundle.editorWorkerService),
        ),
        json: new HashedAsset(GRAPHIQL_ASSETS_PATH, 'json-worker', 'js', javascript, text(bundle.jsonWorker)),
        graphql: new HashedAsset(GRAPHIQL_ASSETS_PATH, 'graphql-worker', 'js', javascript, text(bundle.graphqlWorker)),
      },
    );
  }

  /** The asset a file name (`graphiql.<hash>.js`) names, or undefined for any other name or hash. */
  find(file: string): HashedAsset | undefined {
    return this.byFile.get(file);
  }

  all(): HashedAsset[] {
    return [...this.byFile.values()];
  }
}

/** The bundle ships its icon as a base64 `data:` URL of 150 KB; served as a file it is cached. */
function iconFromDataUrl(dataUrl: string): HashedAsset {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(dataUrl);
  if (!match) throw new Error('GraphiQL icon is not a base64 data URL');
  const type = match[1] as string;
  const extension = type === 'image/x-icon' || type === 'image/vnd.microsoft.icon' ? 'ico' : 'bin';
  return new HashedAsset(GRAPHIQL_ASSETS_PATH, 'favicon', extension, type, Buffer.from(match[2] as string, 'base64'));
}

/** The process's one set of assets (and so one set of compressed bodies), loaded on first use. */
export const graphiqlAssets = loadOnce(() => GraphiqlAssets.load());
