import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freshProject, installedVersion, packClient, packIntegration } from '../../../scripts/packed-packages';
import { DRIVERS, type Driver, type Harness, startHarness } from '../../../services/gateway/test/harness';

/*
 * What the integrations' package tests share: the integration packed with `pnpm pack`, installed
 * with npm beside @tms/client's tarball and the framework versions the workspace pins into one
 * fresh project outside the workspace, and a gateway on PGlite (the embedded default) and one on
 * Postgres, both indexing as `pnpm start` does.
 */

const run = promisify(execFile);
const TSC = path.resolve(import.meta.dirname, '../../../node_modules/typescript/bin/tsc');
const DOCS = path.resolve(import.meta.dirname, '../../../docs/integrations.md');

export interface PackedProject {
  /** Run a program of the fresh project as the owner of a fresh workspace; its last line, as JSON. */
  // biome-ignore lint/suspicious/noExplicitAny: a program's JSON, asserted field by field.
  runProgram(driver: Driver, file: string): Promise<any>;
  /** Run a docs example as written, as a person with a session token (TMS_URL, TOKEN); its lines. */
  runExample(driver: Driver, name: string): Promise<string[]>;
  /**
   * Typecheck TypeScript sources in the project (strict, NodeNext, `skipLibCheck: false`); the
   * diagnostics in them or in @tms packages' declarations (the frameworks' own, which want Node's
   * types, are not ours to judge).
   */
  typecheck(sources: Record<string, string>): Promise<string[]>;
  close(): Promise<void>;
}

/** The `<!-- example:name -->` JS block of docs/integrations.md. */
export function docsExample(name: string): string {
  const block = new RegExp(`<!-- example:${name} -->\n\`\`\`js\n([\\s\\S]*?)\n\`\`\`\n<!-- /example:${name} -->`);
  const match = block.exec(fs.readFileSync(DOCS, 'utf8'));
  if (!match?.[1]) throw new Error(`docs/integrations.md has no example block ${name}`);
  return match[1];
}

/**
 * The fresh project of `integration` (`langchain`, `ai-sdk`) with its registry peers at the
 * workspace's versions and the files of `programs` copied in, and the two gateways.
 */
export async function packedProject(integration: string, peers: string[], programs: string): Promise<PackedProject> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), `tms-${integration}-pack-`));
  const gateways = new Map<Driver, Harness>();
  const close = async () => {
    for (const h of gateways.values()) await h.close();
    fs.rmSync(work, { recursive: true, force: true });
  };
  try {
    const tarballs = await Promise.all([packClient(work), packIntegration(integration, work)]);
    const project = await freshProject(
      path.join(work, 'project'),
      tarballs,
      peers.map((name) => `${name}@${installedVersion(integration, name)}`),
    );
    for (const file of fs.readdirSync(programs)) fs.copyFileSync(path.join(programs, file), path.join(project, file));
    for (const driver of DRIVERS) gateways.set(driver, await startHarness({ driver, env: { INDEXER: 'embedded' } }));
    const node = async (file: string, env: Record<string, string>) => {
      const { stdout } = await run(process.execPath, [file], {
        cwd: project,
        env: { PATH: process.env.PATH ?? '', ...env },
        maxBuffer: 16 * 1024 * 1024,
      });
      return stdout.trim().split('\n');
    };
    return {
      async runProgram(driver, file) {
        const { id, owner } = await (gateways.get(driver) as Harness).workspace();
        const h = gateways.get(driver) as Harness;
        const lines = await node(file, { TMS_URL: h.url, TMS_TOKEN: await owner.token(), TMS_WORKSPACE: id });
        return JSON.parse(lines.at(-1) as string);
      },
      async runExample(driver, name) {
        const h = gateways.get(driver) as Harness;
        fs.writeFileSync(path.join(project, `${name}.mjs`), `${docsExample(name)}\n`);
        return node(`${name}.mjs`, { TMS_URL: h.url, TOKEN: await (await h.human()).token() });
      },
      async typecheck(sources) {
        const dir = path.join(project, 'typed');
        fs.mkdirSync(dir, { recursive: true });
        for (const [file, text] of Object.entries(sources)) fs.writeFileSync(path.join(dir, file), text);
        const compilerOptions = {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2022', 'DOM'],
          types: [],
          strict: true,
          skipLibCheck: false,
          noEmit: true,
        };
        fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['*.ts'] }));
        const output = await run(process.execPath, [TSC, '-p', dir], {
          cwd: project,
          maxBuffer: 16 * 1024 * 1024,
        }).then(
          ({ stdout }) => stdout,
          (error: { stdout?: string }) => error.stdout ?? String(error),
        );
        return output
          .split('\n')
          .filter((line) => /^(typed\/|\.\.\/node_modules\/@tms\/|node_modules\/@tms\/)/.test(line));
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
