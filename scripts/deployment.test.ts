/**
 * The Dockerfile, docker-compose.yml and compose.trial.yaml, read as Docker would read them. No
 * Docker engine runs where this project is developed, so this is how they are kept correct: every
 * service starts a bundle that `pnpm build` makes, is given only variables its env module reads
 * (with values it accepts), waits for what it needs and reports health; the gateway never holds
 * the Meilisearch master key; the commands in the files' comments and in docs/operations.md exist; the
 * image is a supported Node, non-root, under tini.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { TABLE_PLACEMENT } from '../packages/ledger/src/distribution';
import { citusStatements } from '../packages/ledger/src/layout';
import { ENV_KEYS as CLI_KEYS, parseEnv as parseCliEnv } from '../services/cli/src/env';
import { buildProgram } from '../services/cli/src/program';
import { ENV_KEYS as GATEWAY_KEYS, parseEnv as parseGatewayEnv } from '../services/gateway/src/env';
import { ENV_KEYS as INDEXER_KEYS, parseEnv as parseIndexerEnv } from '../services/indexer/src/env';
import { REPO_ROOT, SERVER_NODE_FLAGS, SERVICE_ENTRY_POINTS } from './build';

interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string | number>;
  healthcheck?: { test?: string[]; disable?: boolean };
  profiles?: string[];
  restart?: string;
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
}
interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

const COMPOSE_FILE = 'docker-compose.yml';
const TRIAL_FILE = 'compose.trial.yaml';
const CITUS_FILE = 'compose.citus.yaml';
const readText = (file: string) => fs.readFileSync(path.join(REPO_ROOT, file), 'utf8');
const COMPOSE_TEXT: Record<string, string> = {
  [COMPOSE_FILE]: readText(COMPOSE_FILE),
  [TRIAL_FILE]: readText(TRIAL_FILE),
  [CITUS_FILE]: readText(CITUS_FILE),
};
const FILES: Record<string, ComposeFile> = Object.fromEntries(
  Object.entries(COMPOSE_TEXT).map(([file, text]) => [file, parse(text, { merge: true }) as ComposeFile]),
);
const compose = FILES[COMPOSE_FILE] as ComposeFile;
const trial = FILES[TRIAL_FILE] as ComposeFile;
const citus = FILES[CITUS_FILE] as ComposeFile;
const scaleOutDoc = readText('docs/scale-out.md');
const dockerfile = readText('Dockerfile');
const operationsDoc = readText('docs/operations.md');
const configurationDoc = readText('docs/configuration.md');
// biome-ignore lint/suspicious/noTemplateCurlyInString: compose's interpolation, as written in the file
const MASTER_KEY = '${MEILI_MASTER_KEY:-tms-dev-master-key-change-me}';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-deployment-'));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

/** What the operator exports before `docker compose up`, as docker-compose.yml's header says. */
const OPERATOR_SHELL: Record<string, string> = {
  SESSION_ISSUER: 'https://id.example.com/',
  SESSION_JWKS_URI: 'https://id.example.com/jwks.json',
  SESSION_AUDIENCE: 'tms',
  OAUTH_ISSUER: 'https://id.example.com/',
  OAUTH_JWKS_URI: 'https://id.example.com/jwks.json',
  OAUTH_AUDIENCE: 'tms-api',
};

/**
 * Compose's interpolation with `shell` as the environment: `${VAR:-default}` is the shell's value
 * or the default; `${VAR:?message}` (required) the shell's value or a plausible one.
 */
function interpolate(value: string | number, shell: Record<string, string> = OPERATOR_SHELL): string {
  return String(value).replace(/\$\{([A-Z_]+)(?::([-?])([^}]*))?\}/g, (_, name: string, kind?: string, rest = '') => {
    const given = shell[name];
    if (given !== undefined && given !== '') return given;
    if (kind === '-') return rest;
    if (/URI|ISSUER/.test(name)) return `https://id.example.com/${name.toLowerCase()}`;
    return `${name.toLowerCase()}-value`;
  });
}

/** The `ENV` of the Dockerfile's last stage: what every container starts with. */
function imageEnvironment(): Record<string, string> {
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  const block = /^ENV ((?:.*\\\n)*.*)$/m.exec(runtime)?.[1] ?? '';
  return Object.fromEntries([...block.matchAll(/([A-Z_]+)=(\S+)/g)].map((m) => [m[1] as string, m[2] as string]));
}

/**
 * What a service's process sees: the image's ENV under the service's (interpolated) environment.
 * A key file is replaced by one holding a key, as the search-keys service would have written it.
 */
function processEnvironment(service: ComposeService, shell = OPERATOR_SHELL): Record<string, string> {
  const environment: Record<string, string> = { ...imageEnvironment() };
  for (const [name, value] of Object.entries(service.environment ?? {})) environment[name] = interpolate(value, shell);
  if (environment.MEILI_API_KEY_FILE) {
    const file = path.join(scratch, path.basename(environment.MEILI_API_KEY_FILE));
    fs.writeFileSync(file, 'search-key-value\n');
    environment.MEILI_API_KEY_FILE = file;
  }
  return environment;
}

/** The JSON-array CMD of the Dockerfile's last stage. */
function imageCommand(): string[] {
  const lines = dockerfile.split('\n').filter((line) => line.startsWith('CMD '));
  return JSON.parse((lines.at(-1) ?? 'CMD []').slice(4)) as string[];
}

const appServices = (file: ComposeFile) =>
  Object.entries(file.services).filter(([, service]) => service.build !== undefined);
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

/** A `docker compose ...` command: the file it names, the service it acts on, the `svc` arguments it runs. */
interface ComposeUse {
  line: string;
  file: string | undefined;
  service: string | undefined;
  svcArgs: string[] | undefined;
}

const SERVICE_VERBS = new Set(['run', 'exec', 'logs', 'stop', 'start', 'restart']);
const FLAGS_WITHOUT_VALUE = new Set(['--rm', '--no-deps', '-d', '-v', '--build', '-T']);

function composeUses(text: string): ComposeUse[] {
  const uses: ComposeUse[] = [];
  for (const match of text.matchAll(/docker compose((?: -f \S+)?) ([^#`\n]*)/g)) {
    const file = match[1]?.trim().slice(3) || undefined;
    const [verb = '', ...words] = (match[2] ?? '').trim().split(/\s+/);
    // A trailing `\` continues the command on the next line, which holds only its options.
    const rest = words.filter((word) => !FLAGS_WITHOUT_VALUE.has(word) && word !== '\\');
    let service: string | undefined;
    let svcArgs: string[] | undefined;
    if (SERVICE_VERBS.has(verb) && rest[0] && !rest[0].startsWith('-')) {
      service = rest[0];
      const argv = rest.slice(1);
      if (service === 'svc' && verb === 'run') svcArgs = argv;
      const script = argv.indexOf('dist/bin/svc.mjs');
      if (script >= 0) svcArgs = argv.slice(script + 1);
    }
    uses.push({ line: match[0], file, service, svcArgs });
  }
  return uses;
}

/** The part of a commander command the walk below reads. */
interface AnyCommand {
  name(): string;
  readonly commands: readonly AnyCommand[];
}
const program = buildProgram({
  stdout: () => {},
  stderr: () => {},
  env: () => Promise.reject(new Error('not run')),
}) as unknown as AnyCommand;

/** Whether `svc <args>` names an operator command: its leading words reach a leaf, or ask for help. */
function svcCommandExists(args: readonly string[]): boolean {
  let command = program;
  for (const word of args) {
    // Options, or a leaf's own arguments, follow the command's name.
    if (word.startsWith('-') || command.commands.length === 0) break;
    const sub = command.commands.find((candidate) => candidate.name() === word);
    if (!sub) return false;
    command = sub;
  }
  return command.commands.length === 0 || args.includes('--help');
}

/** Every `docker compose` use names a file that exists, a service of it and an operator command that exists. */
function expectUsesExist(uses: ComposeUse[], defaultFile: string): void {
  for (const use of uses) {
    const parsed = FILES[use.file ?? defaultFile];
    expect(parsed, use.line).toBeDefined();
    if (use.service) expect(Object.keys(parsed?.services ?? {}), use.line).toContain(use.service);
    if (use.svcArgs) expect(svcCommandExists(use.svcArgs), use.line).toBe(true);
  }
}

describe.each(Object.keys(FILES))('%s', (file) => {
  const parsed = FILES[file] as ComposeFile;

  it('every long-running service reports health (its own check or the image’s)', () => {
    for (const [name, service] of Object.entries(parsed.services)) {
      if (service.restart === 'no') continue;
      const own = service.healthcheck && !service.healthcheck.disable;
      const fromImage = service.build !== undefined && /^HEALTHCHECK /m.test(dockerfile);
      expect(own || fromImage, name).toBeTruthy();
    }
  });

  it('waits for a one-shot service to complete and for a long-running one to be healthy', () => {
    for (const [name, service] of Object.entries(parsed.services)) {
      for (const [dependency, { condition }] of Object.entries(service.depends_on ?? {})) {
        const target = parsed.services[dependency];
        expect(target, `${name} depends on ${dependency}`).toBeDefined();
        const expected = target?.restart === 'no' ? 'service_completed_successfully' : 'service_healthy';
        expect(condition, `${name} -> ${dependency}`).toBe(expected);
      }
    }
  });

  it('mounts only volumes it declares', () => {
    for (const [name, service] of Object.entries(parsed.services)) {
      for (const volume of service.volumes ?? []) {
        expect(Object.keys(parsed.volumes ?? {}), `${name}: ${volume}`).toContain(volume.split(':')[0]);
      }
    }
  });

  it('its comments name this file, its services and operator commands that exist', () => {
    const comments = (COMPOSE_TEXT[file] as string)
      .split('\n')
      .filter((line) => line.trimStart().startsWith('#'))
      .join('\n');
    const uses = composeUses(comments);
    expect(uses.length).toBeGreaterThan(0);
    for (const use of uses) expect(use.file ?? COMPOSE_FILE, use.line).toBe(file);
    expectUsesExist(uses, file);
  });

  it.each(appServices(parsed))(
    '%s starts a bundle that `pnpm build` makes, with node and no pnpm or tsx',
    (_, service) => {
      const bundle = bundleOf(service);
      expect(Object.keys(SERVICE_ENTRY_POINTS)).toContain(bundle);
      const argv = [...(service.entrypoint ?? []), ...(service.command ?? [])].join(' ');
      expect(argv).not.toMatch(/\b(pnpm|tsx|npx)\b/);
    },
  );

  it.each(appServices(parsed))('%s is given only variables its service reads, with values it accepts', (_, service) => {
    const { keys, parse: parseEnv } = ENV_OF_BUNDLE[bundleOf(service)] ?? { keys: [], parse: () => null };
    const unknown = Object.keys(service.environment ?? {}).filter(
      (name) => !keys.includes(name) && !IMAGE_ONLY.has(name) && name !== 'NODE_ENV',
    );
    expect(unknown).toEqual([]);
    expect(() => parseEnv(processEnvironment(service))).not.toThrow();
  });
});

describe('docker-compose.yml', () => {
  it('runs the gateway, indexer, migrations, search keys and the CLI from the image', () => {
    expect(appServices(compose).map(([name]) => name)).toEqual(['migrate', 'search-keys', 'gateway', 'indexer', 'svc']);
  });

  it('starts the gateway after the migrations and the search key, behind healthy stores', () => {
    expect(compose.services.gateway?.depends_on).toEqual({
      migrate: { condition: 'service_completed_successfully' },
      'search-keys': { condition: 'service_completed_successfully' },
      postgres: { condition: 'service_healthy' },
      meilisearch: { condition: 'service_healthy' },
      redis: { condition: 'service_healthy' },
    });
    expect(compose.services['search-keys']?.depends_on).toEqual({ meilisearch: { condition: 'service_healthy' } });
    expect(compose.services.indexer?.depends_on?.migrate?.condition).toBe('service_completed_successfully');
  });

  it('every process reading the search index sees the same one', () => {
    const search = (name: string) => {
      const env = compose.services[name]?.environment ?? {};
      return [env.SEARCH_PROVIDER, env.MEILI_URL].join(' ');
    };
    expect(new Set(['gateway', 'indexer', 'migrate', 'svc'].map(search)).size).toBe(1);
    expect(search('gateway')).toBe('meilisearch http://meilisearch:7700');
    expect(compose.services['search-keys']?.environment?.MEILI_URL).toBe('http://meilisearch:7700');
  });

  it('gives the gateway a search-only key, written by search-keys to a volume it mounts read-only', () => {
    const gateway = compose.services.gateway as ComposeService;
    const keys = compose.services['search-keys'] as ComposeService;
    const command = keys.command ?? [];
    expect(command.slice(0, 2)).toEqual(['search', 'create-key']);
    expect(svcCommandExists(command)).toBe(true);
    const output = command[command.indexOf('--output') + 1] as string;
    const directory = path.posix.dirname(output);
    expect(gateway.environment?.MEILI_API_KEY_FILE).toBe(output);
    const mountOf = (service: ComposeService) =>
      (service.volumes ?? []).find((volume) => volume.split(':')[1] === directory);
    expect(mountOf(keys)).toBe(`search-keys:${directory}`);
    expect(mountOf(gateway)).toBe(`search-keys:${directory}:ro`);
    // The image makes the mount point the runtime user's, so a new volume there is writable by it.
    const owned = /^RUN mkdir -p (.*) && chown node:node (.*)$/m.exec(dockerfile);
    expect(owned?.[1]?.split(' ')).toContain(directory);
    expect(owned?.[2]?.split(' ')).toContain(directory);
  });

  it('never gives the gateway the master key; those that write the index keep it', () => {
    expect(compose.services.meilisearch?.environment?.MEILI_MASTER_KEY).toBe(MASTER_KEY);
    const gateway = compose.services.gateway?.environment ?? {};
    expect(Object.keys(gateway)).not.toContain('MEILI_MASTER_KEY');
    expect(Object.keys(gateway)).not.toContain('MEILI_API_KEY');
    for (const value of Object.values(gateway)) {
      expect(String(value)).not.toContain('MEILI_MASTER_KEY');
      expect(interpolate(value)).not.toBe(interpolate(MASTER_KEY));
    }
    for (const name of ['indexer', 'svc', 'search-keys']) {
      expect(compose.services[name]?.environment?.MEILI_API_KEY, name).toBe(MASTER_KEY);
    }
    expect(compose.services.migrate?.environment?.MEILI_API_KEY).toBeUndefined();
  });

  it('the gateway leaves indexing to the indexer service, which has a health endpoint', () => {
    expect(compose.services.gateway?.environment?.INDEXER).toBe('external');
    const indexer = compose.services.indexer?.environment ?? {};
    expect(indexer.HEALTHCHECK_URL).toBe(`http://127.0.0.1:${indexer.INDEXER_METRICS_PORT}/healthz`);
  });

  it('counts the gateway’s rate limits in the redis service, so replicas share one budget', () => {
    const url = compose.services.gateway?.environment?.RATE_LIMIT_REDIS_URL;
    expect(url).toBe('redis://redis:6379');
    expect(compose.services.redis?.image).toMatch(/^redis:\d+/);
    expect(parseGatewayEnv(processEnvironment(compose.services.gateway as ComposeService)).RATE_LIMIT_REDIS_URL).toBe(
      url,
    );
  });

  it('keeps the operator CLI out of `docker compose up`', () => {
    expect(compose.services.svc?.profiles).toEqual(['tools']);
  });

  it('asks for no variable before a command runs (`svc --help` needs no secrets); the gateway names the missing', () => {
    // Compose checks `${VAR:?}` when it reads the file, whatever runs: none may be in it.
    expect(COMPOSE_TEXT[COMPOSE_FILE]).not.toMatch(/\$\{[A-Z_]+:\?/);
    // With nothing exported, the CLI's environment is complete...
    const svc = compose.services.svc as ComposeService;
    expect(() => parseCliEnv(processEnvironment(svc, {}))).not.toThrow();
    // ...and the gateway stops at start, naming each issuer variable.
    const gateway = compose.services.gateway as ComposeService;
    let refusal = '';
    try {
      parseGatewayEnv(processEnvironment(gateway, {}));
    } catch (error) {
      refusal = (error as Error).message;
    }
    for (const name of Object.keys(OPERATOR_SHELL)) expect(refusal, name).toContain(`${name}: is empty`);
    expect(() => parseGatewayEnv(processEnvironment(gateway))).not.toThrow();
  });
});

describe('compose.trial.yaml', () => {
  it('runs one gateway signing its own tokens on the embedded ledger, with no variable required', () => {
    expect(appServices(trial).map(([name]) => name)).toEqual(['gateway']);
    const environment = processEnvironment(trial.services.gateway as ComposeService);
    expect(environment).toMatchObject({ DEV_AUTH: '1', NODE_ENV: 'development', DATA_DIR: '/data' });
    expect(environment.DATABASE_URL).toBeUndefined();
    // DEV_AUTH=1 under the image's NODE_ENV=production is refused: the trial must override it.
    expect(imageEnvironment().NODE_ENV).toBe('production');
    expect(() => parseGatewayEnv({ ...environment, NODE_ENV: 'production' })).toThrow(
      'DEV_AUTH=1 is refused when NODE_ENV=production',
    );
    // `${VAR:?}` is checked when the file is read, whatever runs: a trial must start with none set.
    expect(COMPOSE_TEXT[TRIAL_FILE]).not.toMatch(/\$\{[A-Z_]+:\?/);
  });

  it('listens on every interface inside the container, published on the host loopback only', () => {
    // DEV_AUTH=1 alone would listen on the container's 127.0.0.1, out of the port mapping's reach.
    const gateway = trial.services.gateway as ComposeService & { ports?: string[] };
    expect(parseGatewayEnv(processEnvironment(gateway)).HOST).toBe('0.0.0.0');
    expect(gateway.ports?.map((port) => interpolate(port))).toEqual(['127.0.0.1:8080:8080']);
  });

  it('keeps the ledger and the dev key on a volume', () => {
    expect(trial.services.gateway?.volumes).toEqual(['trial-data:/data']);
  });

  it('tells how to get a dev token while the gateway runs', () => {
    expect(composeUses(COMPOSE_TEXT[TRIAL_FILE] as string)).toContainEqual({
      line: expect.stringContaining('exec gateway'),
      file: TRIAL_FILE,
      service: 'gateway',
      svcArgs: ['token'],
    });
  });
});

describe('compose.citus.yaml', () => {
  const nodes = ['coordinator', 'worker-1', 'worker-2'];

  it('runs a coordinator and two workers from the official Citus image, on the network only', () => {
    for (const name of nodes) {
      const node = citus.services[name] as ComposeService & { ports?: string[] };
      expect(node.image, name).toMatch(/^citusdata\/citus:1[3-9]\./);
      expect(node.environment?.POSTGRES_DB, name).toBe('tms');
      expect(node.ports, name).toBeUndefined();
    }
  });

  it('registers the workers with the coordinator before migrating, and migrates with CITUS=1', () => {
    const register = citus.services['register-workers'] as ComposeService;
    const command = (register.command ?? []).join(' ');
    expect(command).toContain("citus_set_coordinator_host('coordinator', 5432)");
    for (const worker of nodes.slice(1)) expect(command).toContain(`citus_add_node('${worker}', 5432)`);
    expect(Object.keys(register.depends_on ?? {}).sort()).toEqual([...nodes].sort());
    const migrate = citus.services.migrate as ComposeService;
    expect(migrate.depends_on).toEqual({ 'register-workers': { condition: 'service_completed_successfully' } });
    const env = parseCliEnv(processEnvironment(migrate));
    expect(env.CITUS).toBe('1');
    expect(env.DATABASE_LAYOUT).toBe('plain');
  });

  it('points the gateway, the indexer and the CLI at the coordinator, searching in Meilisearch', () => {
    for (const name of ['gateway', 'indexer', 'migrate', 'svc']) {
      const url = new URL(interpolate(citus.services[name]?.environment?.DATABASE_URL ?? ''));
      expect(url.hostname, name).toBe('coordinator');
      expect(citus.services[name]?.environment?.SEARCH_PROVIDER, name).toBe('meilisearch');
    }
    expect(citus.services.gateway?.depends_on?.migrate?.condition).toBe('service_completed_successfully');
  });

  it('CITUS=1 distributes every workspace table co-located by workspace_id and replicates every directory table, idempotently', () => {
    const statements = citusStatements();
    for (const [table, placement] of Object.entries(TABLE_PLACEMENT)) {
      const own = statements.filter((statement) => statement.includes(`'"${table}"'`));
      expect(own, table).toHaveLength(1);
      const statement = own[0] as string;
      expect(statement, table).toContain(
        `NOT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = '"${table}"'::regclass)`,
      );
      if (placement === 'reference') expect(statement, table).toContain(`create_reference_table('"${table}"')`);
      if (placement === 'distributed') {
        expect(statement, table).toMatch(
          new RegExp(
            `create_distributed_table\\('"${table}"', 'workspace_id', colocate_with => '(none|workspace_heads)'\\)`,
          ),
        );
      }
    }
    // The co-location group's first table comes before the others.
    expect(statements.findIndex((s) => s.includes("colocate_with => 'none'"))).toBeLessThan(
      statements.findIndex((s) => s.includes("colocate_with => 'workspace_heads'")),
    );
  });

  it('docs/scale-out.md names this file, its services and commands that exist, and says what was not run here', () => {
    const uses = composeUses(scaleOutDoc);
    expect(uses.length).toBeGreaterThan(0);
    for (const use of uses) expect(use.file, use.line).toBe(CITUS_FILE);
    expectUsesExist(uses, CITUS_FILE);
    expect(scaleOutDoc).toMatch(/not been run against a live Citus cluster/);
  });
});

describe('docs/operations.md and docs/configuration.md', () => {
  it('names both compose files, their services and operator commands that exist', () => {
    const uses = composeUses(operationsDoc);
    expect(new Set(uses.map((use) => use.file ?? COMPOSE_FILE))).toEqual(new Set([COMPOSE_FILE, TRIAL_FILE]));
    expectUsesExist(uses, COMPOSE_FILE);
  });

  it('has a configuration row for every variable a compose file sets on the gateway', () => {
    for (const parsed of Object.values(FILES)) {
      for (const name of Object.keys(parsed.services.gateway?.environment ?? {})) {
        expect(configurationDoc, name).toMatch(new RegExp(`^\\|.*\`${name}\``, 'm'));
      }
    }
  });
});

describe('one Node policy', () => {
  // Images run Node 22 LTS (Node 20 reached its end of life in April 2026); the tests run on
  // Node 20.19+ and, with CI_NODE22=1, a subset on Node 22 too. engines admits both.
  const IMAGE_MAJOR = 22;

  it('the Dockerfile, package.json engines and .ci/run say the same', () => {
    expect(Number(/^ARG NODE_IMAGE=node:(\d+)/m.exec(dockerfile)?.[1])).toBe(IMAGE_MAJOR);
    expect(dockerfile).toMatch(new RegExp(`^# Node ${IMAGE_MAJOR} LTS`, 'm'));
    const engines = (JSON.parse(readText('package.json')) as { engines: { node: string } }).engines.node;
    expect(engines).toBe(`^20.19.0 || >=${IMAGE_MAJOR}.12.0`);
    const ci = readText('.ci/run');
    expect(ci).toMatch(/CI_NODE22:-0/);
    expect(ci).toContain(`npx -y node@${IMAGE_MAJOR} node_modules/vitest/vitest.mjs run`);
  });
});

describe('Dockerfile', () => {
  it('runs a supported Node LTS (22 or later), as the node user, under tini', () => {
    const major = Number(/^ARG NODE_IMAGE=node:(\d+)/m.exec(dockerfile)?.[1]);
    expect(major).toBeGreaterThanOrEqual(22);
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toMatch(/^ENTRYPOINT \["\/usr\/bin\/tini", "--"\]$/m);
    expect(imageCommand()).toEqual(['node', ...SERVER_NODE_FLAGS, 'dist/bin/gateway.mjs']);
  });

  it('starts the gateway and the indexer with the Node flags `pnpm start` and the benchmark use', () => {
    const flags = SERVER_NODE_FLAGS.join(' ');
    const scripts = (JSON.parse(readText('package.json')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.start).toContain(`exec node ${flags} dist/bin/gateway.mjs`);
    expect(imageCommand()).toEqual(['node', ...SERVER_NODE_FLAGS, 'dist/bin/gateway.mjs']);
    expect(compose.services.indexer?.command).toEqual(['node', ...SERVER_NODE_FLAGS, 'dist/bin/indexer.mjs']);
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
