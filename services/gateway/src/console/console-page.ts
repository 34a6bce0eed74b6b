import type { IncomingMessage, ServerResponse } from 'node:http';
import { DomainError } from '@tms/domain';
import { serveHashedAsset } from '../http/hashed-assets';
import type { RequestScope } from '../http/request-scope';
import { CONSOLE_ASSETS_PATH, consoleAssets } from './console-assets';

export const CONSOLE_PATH = '/console';

export interface ConsoleOptions {
  /** CONSOLE=off turns /console and its assets off (`not_found`). */
  enabled: boolean;
  /** DEV_AUTH=1: a fresh dev-admin session token, so the embedded quickstart needs no sign-in. */
  devToken: (() => Promise<string>) | null;
}

/**
 * The shell's Content-Security-Policy: scripts, styles and requests to this origin only, no inline
 * script (the configuration is a JSON data block, which is never run), no frames, no plugins. The
 * token lives in the tab's storage, so what may run on the page is kept to the console's own script.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** JSON safe inside an inline `<script>`: no `</script>` or `<!--` can close or change it. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

/**
 * The console's page: a shell of well under 2 KB, `no-store` (it may carry a dev token), that loads
 * the script and stylesheet from /console/assets/ by content hash. It holds no data: the app reads
 * everything through /v1 and /graphql with the bearer token the person pastes (kept in the tab's
 * sessionStorage) or, with DEV_AUTH=1, the dev token written here.
 */
export async function consolePage(options: ConsoleOptions): Promise<string> {
  const assets = await consoleAssets();
  const config = { devToken: options.devToken ? await options.devToken() : null };
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Temporal Memory Service · Console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${assets.stylesheet.url}">
<script type="module" src="${assets.script.url}"></script>
</head>
<body>
<noscript>The console needs JavaScript.</noscript>
<div id="app"></div>
<script id="console-config" type="application/json">${scriptJson(config)}</script>
</body>
</html>
`;
}

/** GET /console (the shell) and /console/assets/<name>.<hash>.<ext>; everything else under it is `not_found`. */
export async function serveConsole(
  req: IncomingMessage,
  res: ServerResponse,
  scope: RequestScope,
  options: ConsoleOptions,
): Promise<void> {
  const pathname = (req.url ?? '').split('?')[0] ?? '';
  if (pathname.startsWith(CONSOLE_ASSETS_PATH)) {
    scope.operation = 'console_asset';
    if (!options.enabled) throw new DomainError('not_found');
    const file = pathname.slice(CONSOLE_ASSETS_PATH.length);
    return serveHashedAsset(req, res, scope, async () => (await consoleAssets()).find(file));
  }
  scope.operation = 'console';
  if (!options.enabled || (pathname !== CONSOLE_PATH && pathname !== `${CONSOLE_PATH}/`)) {
    throw new DomainError('not_found');
  }
  const method = req.method ?? 'GET';
  if (method !== 'GET' && method !== 'HEAD') {
    scope.allow = ['GET', 'HEAD'];
    throw new DomainError('method_not_allowed');
  }
  const html = Buffer.from(await consolePage(options), 'utf8');
  res.writeHead(200, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': String(html.length),
    'cache-control': 'private, no-store',
    'content-security-policy': CONTENT_SECURITY_POLICY,
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'x-request-id': scope.requestId,
  });
  res.end(method === 'HEAD' ? undefined : html);
}
