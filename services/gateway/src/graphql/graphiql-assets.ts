import crypto from 'node:crypto';
import { promisify } from 'node:util';
import zlib from 'node:zlib';

/** GraphiQL's scripts, stylesheet, workers and icon live under this prefix, named by content hash. */
export const GRAPHIQL_ASSETS_PATH = '/graphql/assets/';

/** A year, and `immutable`: a changed asset gets a new name, so a cached one never goes stale. */
export const ASSET_CACHE_CONTROL = 'public, max-age=31536000, immutable';

export type ContentCoding = 'br' | 'gzip' | 'identity';

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

/**
 * Quality 5: about 2.5 s for the 5 MB script on this machine's kind (quality 11 takes over a
 * minute, for 13% fewer bytes), paid once per asset and coding by the first browser that asks.
 */
const BROTLI_QUALITY = 5;

function compress(coding: 'br' | 'gzip', bytes: Buffer): Promise<Buffer> {
  if (coding === 'gzip') return gzip(bytes, { level: 9 });
  return brotli(bytes, {
    params: {
      [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
      [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
      [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
    },
  });
}

/** One asset: its bytes, a name that changes whenever they do, and each coding made once, on first use. */
export class HashedAsset {
  readonly hash: string;
  readonly file: string;
  private readonly encoded = new Map<'br' | 'gzip', Promise<Buffer>>();

  constructor(
    stem: string,
    extension: string,
    readonly contentType: string,
    readonly bytes: Buffer,
  ) {
    this.hash = crypto.createHash('sha256').update(bytes).digest('hex').slice(0, 20);
    this.file = `${stem}.${this.hash}.${extension}`;
  }

  get url(): string {
    return `${GRAPHIQL_ASSETS_PATH}${this.file}`;
  }

  /** Each coding is a representation of its own, with its own strong validator. */
  etag(coding: ContentCoding): string {
    return coding === 'identity' ? `"${this.hash}"` : `"${this.hash}-${coding}"`;
  }

  /** The body in `coding`; concurrent first requests share one compression, and a failed one is retried. */
  body(coding: ContentCoding): Promise<Buffer> {
    if (coding === 'identity') return Promise.resolve(this.bytes);
    let pending = this.encoded.get(coding);
    if (!pending) {
      pending = compress(coding, this.bytes);
      this.encoded.set(coding, pending);
      pending.catch(() => this.encoded.delete(coding));
    }
    return pending;
  }
}

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
      new HashedAsset('graphiql', 'js', javascript, text(bundle.js)),
      new HashedAsset('graphiql', 'css', 'text/css; charset=utf-8', text(bundle.css)),
      iconFromDataUrl(bundle.favicon),
      {
        editorWorkerService: new HashedAsset('editor-worker', 'js', javascript, text(bundle.editorWorkerService)),
        json: new HashedAsset('json-worker', 'js', javascript, text(bundle.jsonWorker)),
        graphql: new HashedAsset('graphql-worker', 'js', javascript, text(bundle.graphqlWorker)),
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
  return new HashedAsset('favicon', extension, type, Buffer.from(match[2] as string, 'base64'));
}

let loading: Promise<GraphiqlAssets> | null = null;

/** The process's one set of assets (and so one set of compressed bodies), loaded on first use. */
export function graphiqlAssets(): Promise<GraphiqlAssets> {
  if (!loading) {
    loading = GraphiqlAssets.load();
    loading.catch(() => {
      loading = null;
    });
  }
  return loading;
}

/**
 * The coding to answer with for an `Accept-Encoding` header (RFC 9110 §12.5.3): the acceptable
 * one of highest weight, brotli before gzip on a tie; identity when neither is acceptable.
 */
export function chooseCoding(acceptEncoding: string | undefined): ContentCoding {
  const weights = new Map<string, number>();
  for (const part of (acceptEncoding ?? '').split(',')) {
    const [name, ...params] = part.split(';').map((piece) => piece.trim().toLowerCase());
    if (!name) continue;
    let weight = 1;
    for (const param of params) {
      const q = /^q=([01](?:\.\d{0,3})?)$/.exec(param);
      if (q) weight = Number(q[1]);
    }
    weights.set(name, weight);
  }
  const weightOf = (coding: string) => weights.get(coding) ?? weights.get('*') ?? 0;
  const br = weightOf('br');
  const gz = Math.max(weightOf('gzip'), weights.get('x-gzip') ?? 0);
  if (br > 0 && br >= gz) return 'br';
  if (gz > 0) return 'gzip';
  return 'identity';
}

/** Whether an `If-None-Match` header matches `etag` (weak comparison, as RFC 9110 §13.1.2 asks for GET). */
export function matchesIfNoneMatch(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((candidate) => {
    const tag = candidate.trim();
    return tag === '*' || tag === etag || tag === `W/${etag}`;
  });
}
