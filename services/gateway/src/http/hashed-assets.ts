import crypto from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { DomainError } from '@tms/domain';
import type { RequestScope } from './request-scope';

/**
 * Static files named by content hash (GraphiQL's and the console's): public, compressed once per
 * process, cacheable for a year and revalidated with ETag/304.
 */

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
    /** The URL path the asset is served under, ending in `/`. */
    readonly prefix: string,
    stem: string,
    extension: string,
    readonly contentType: string,
    readonly bytes: Buffer,
  ) {
    this.hash = crypto.createHash('sha256').update(bytes).digest('hex').slice(0, 20);
    this.file = `${stem}.${this.hash}.${extension}`;
  }

  get url(): string {
    return `${this.prefix}${this.file}`;
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

/**
 * The coding to answer with for an `Accept-Encoding` header (RFC 9110 §12.5.3): the acceptable
 * one of highest weight, brotli before gzip on a tie; identity when neither is acceptable.
 */
/**
 * A process's one copy of something loaded on first use (a set of assets and its compressed
 * bodies); a load that failed is tried again at the next call.
 */
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | null = null;
  return () => {
    if (!loading) {
      loading = load();
      loading.catch(() => {
        loading = null;
      });
    }
    return loading;
  };
}

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

/**
 * GET (or HEAD) of a hashed asset, public and unauthenticated like any page asset (they hold no
 * data). The body is brotli or gzip as `Accept-Encoding` allows, compressed once per process; each
 * coding has its own strong ETag and a matching `If-None-Match` is answered 304. An asset the
 * running version does not serve (`undefined`) is `not_found`.
 */
export async function serveHashedAsset(
  req: IncomingMessage,
  res: ServerResponse,
  scope: RequestScope,
  find: () => Promise<HashedAsset | undefined>,
): Promise<void> {
  const method = req.method ?? 'GET';
  if (method !== 'GET' && method !== 'HEAD') {
    scope.allow = ['GET', 'HEAD'];
    throw new DomainError('method_not_allowed');
  }
  const asset = await find();
  if (!asset) throw new DomainError('not_found');

  const coding = chooseCoding(req.headers['accept-encoding']);
  const etag = asset.etag(coding);
  const headers: Record<string, string> = {
    'cache-control': ASSET_CACHE_CONTROL,
    etag,
    vary: 'Accept-Encoding',
    'x-content-type-options': 'nosniff',
    'x-request-id': scope.requestId,
  };
  if (matchesIfNoneMatch(req.headers['if-none-match'], etag)) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  const body = await asset.body(coding);
  res.writeHead(200, {
    ...headers,
    'content-type': asset.contentType,
    'content-length': String(body.length),
    ...(coding === 'identity' ? {} : { 'content-encoding': coding }),
  });
  res.end(method === 'HEAD' ? undefined : body);
}
