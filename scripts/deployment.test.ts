/**
 * The Dockerfile and docker-compose.yml, read as Docker would read them. No Docker engine runs
 * where this project is developed, so this is how they are kept correct: every service starts a
 * bundle that `pnpm build` makes, is given only variables its env module reads (with values it
 * accepts), and reports health; the image is a supported Node, non-root, under tini.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ENV_KEYS as CLI_KEYS, parseEnv as parseCliEnv } from '../services/cli/src/env';
import { ENV_KEYS as GATEWAY_KEYS, parseEnv as parseGatewayEnv } from '../services/gateway/src/env';
import { ENV_KEYS as INDEXER_KEYS, parseEnv as parseIndexerEnv } from '../services/indexer/src/env';
import { REPO_ROOT, SERVICE_ENTRY_POINTS } from './build';

interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string | number>;
  healthcheck?: { test?: string[]; disable?: boolean };
  profiles?: string[];
  restart?: string;
}

const compose = parse(fs.readFileSync(path.join(REPO_ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, ComposeService>;
};
const dockerfile = fs.readFileSync(path.join(REPO_ROOT, 'Dockerfile'), 'utf8');

/** `${VAR:-default}` becomes the default; `${VAR:?message}` (required) becomes a plausible value. */
function interpolate(value: string | number): string {
  return String(value).replace(/\$\{([A-Z_]+)(?::([-?])([^}]*))?\}/g, (_, name: string, kind?: string, rest = '') => {
    if (kind === '-') return rest;
    if (/URI|ISSUER/.test(name)) return `https://id.example.com/${name.toLowerCase()}`;
    return `${name.toLowerCase()}-value`;
  });
}

/** The JSON-array CMD of the Dockerfile's last stage. */
function imageCommand(): string[] {
  const lines = dockerfile.split('\n').filter((line) => line.startsWith('CMD '));
  return JSON.parse((lines.at(-1) ?? 'CMD []').slice(4)) as string[];
}

const APP_SERVICES = Object.entries(compose.services).filter(([, service]) => service.build !== undefined);
const ENV_OF_BUNDLE: Record<string, { keys: readonly string[]; parse: (env: Record<string, string>) => unknown }> = {
  gateway: { keys: GATEWAY_KEYS, parse: parseGatewayEnv },
  indexer: { keys: INDEXER_KEYS, parse: parseIndexerEnv },
  svc: { keys: CLI_KEYS, parse: parseCliEnv },
};
/** Read by the image's HEALTHCHECK, not by a service. */
const IMAGE_ONLY = new Set(['HEALTHCHECK_URL']);

function bundleOf(service: ComposeService): string {
  const argv = [...(service.entrypoint ?? []), ...(service.command ?? (service.entrypoint ? [] : imageCommand()))];
  const script = argv.find((arg) => arg.startsWith('dist/bin/'));
  if (!script) throw new Error(`no dist/bin bundle in ${JSON.stringify(argv)}`);
  return path.basename(script, '.mjs');
}

describe('docker-compose.yml', () => {
  it('runs the gateway, indexer, migrations and the CLI from the image', () => {
    expect(APP_SERVICES.map(([name]) => name).sort()).toEqual(['gateway', 'indexer', 'migrate', 'svc']);
  });

  it.each(APP_SERVICES)('%s starts a bundle that `pnpm build` makes, with node and no pnpm or tsx', (_, service) => {
    const bundle = bundleOf(service);
    expect(Object.keys(SERVICE_ENTRY_POINTS)).toContain(bundle);
    const argv = [...(service.entrypoint ?? []), ...(service.command ?? [])].join(' ');
    expect(argv).not.toMatch(/\b(pnpm|tsx|npx)\b/);
  });

  it.each(APP_SERVICES)('%s is given only variables its service reads, with values it accepts', (_, service) => {
    const environment = Object.fromEntries(
      Object.entries(service.environment ?? {}).map(([name, value]) => [name, interpolate(value)]),
    );
    const { keys, parse: parseEnv } = ENV_OF_BUNDLE[bundleOf(service)] ?? { keys: [], parse: () => null };
    const unknown = Object.keys(environment).filter(
      (name) => !keys.includes(name) && !IMAGE_ONLY.has(name) && name !== 'NODE_ENV',
    );
    expect(unknown).toEqual([]);
    expect(() => parseEnv(environment)).not.toThrow();
  });

  it('every process reading the search index sees the same one', () => {
    const search = (name: string) => {
      const env = compose.services[name]?.environment ?? {};
      return [env.SEARCH_PROVIDER, env.MEILI_URL].join(' ');
    };
    expect(new Set(['gateway', 'indexer', 'migrate', 'svc'].map(search)).size).toBe(1);
    expect(search('gateway')).toBe('meilisearch http://meilisearch:7700');
  });

  it('the gateway leaves indexing to the indexer service, which has a health endpoint', () => {
    expect(compose.services.gateway?.environment?.INDEXER).toBe('external');
    const indexer = compose.services.indexer?.environment ?? {};
    expect(indexer.HEALTHCHECK_URL).toBe(`http://127.0.0.1:${indexer.INDEXER_METRICS_PORT}/healthz`);
  });

  it('every long-running service reports health (its own check or the image’s)', () => {
    for (const [name, service] of Object.entries(compose.services)) {
      if (service.restart === 'no') continue;
      const own = service.healthcheck && !service.healthcheck.disable;
      const fromImage = service.build !== undefined && /^HEALTHCHECK /m.test(dockerfile);
      expect(own || fromImage, name).toBeTruthy();
    }
  });
});

describe('Dockerfile', () => {
  it('runs a supported Node LTS (22 or later), as the node user, under tini', () => {
    const major = Number(/^ARG NODE_IMAGE=node:(\d+)/m.exec(dockerfile)?.[1]);
    expect(major).toBeGreaterThanOrEqual(22);
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toMatch(/^ENTRYPOINT \["\/usr\/bin\/tini", "--"\]$/m);
    expect(imageCommand()).toEqual(['node', '--enable-source-maps', 'dist/bin/gateway.mjs']);
  });

  it('builds once and ships production dependencies only', () => {
    expect(dockerfile).toMatch(/pnpm build/);
    expect(dockerfile).toMatch(/pnpm install --prod --frozen-lockfile --offline --ignore-scripts/);
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(runtime.match(/^COPY .*$/gm)).toEqual([
      'COPY --from=build /app/dist ./dist',
      'COPY --from=build /app/node_modules ./node_modules',
    ]);
  });
});
