import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildScenario, memoryIn, ok, type Scenario } from './changes-scenario';
import { type Harness, startHarness } from './harness';

/** The README's "Reacting to changes" examples: quoted verbatim from examples/ and run as written. */
const ROOT = path.resolve(import.meta.dirname, '../../..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

function quoted(file: string): string {
  const match = new RegExp(`<!-- file:${file} -->\\n\`\`\`sh\\n([\\s\\S]*?)\`\`\`\\n<!-- /file:${file} -->`).exec(
    README,
  );
  if (!match?.[1]) throw new Error(`README does not quote ${file}`);
  return match[1];
}

describe('README: reacting to changes', () => {
  let h: Harness;
  let s: Scenario;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    h = await startHarness({ driver: 'pglite' });
    s = await buildScenario(h);
    env = { ...process.env, TMS_URL: h.url, TOKEN: await s.reader.token(), WS: s.workspaceId };
  });
  afterAll(() => h?.close());

  it.each(['examples/changes-poll.sh', 'examples/changes-subscribe.sh'])('quotes %s verbatim', (file) => {
    expect(quoted(file)).toBe(fs.readFileSync(path.join(ROOT, file), 'utf8'));
  });

  it('the curl loop prints every change the reader may see, then resumes from AFTER', async () => {
    const run = async (extra: Record<string, string>) =>
      (
        await promisify(execFile)('bash', [path.join(ROOT, 'examples/changes-poll.sh')], {
          env: { ...env, UNTIL_CAUGHT_UP: '1', ...extra },
        })
      ).stdout
        .trim()
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line));
    const all = await run({});
    const api = (await ok(s.readerApi.get('/v1/changes', { query: { limit: 100 } }))).body;
    expect(all.map((c) => c.sequence)).toEqual(api.changes.map((c: { sequence: number }) => c.sequence));
    expect(all[0]).toEqual({
      sequence: api.changes[0].sequence,
      operation: 'namespaces.create',
      subjects: [`namespace ${s.ns.a}`],
    });
    const created = (await memoryIn(s.admin, s.ns.a, 'after the first run')).body;
    const resumed = await run({ AFTER: String(api.next_after) });
    expect(resumed).toEqual([
      {
        sequence: created.commit.sequence,
        operation: 'memories.create',
        subjects: [`memory ${created.memory.id}`, `revision ${created.revision.id}`],
      },
    ]);
  });

  it('the subscription example streams a change committed after it started', async () => {
    const head = (await ok(s.admin.get('/v1/changes', { query: { limit: 1 } }))).body.head_sequence;
    const child = spawn('bash', [path.join(ROOT, 'examples/changes-subscribe.sh')], {
      env: { ...env, AFTER: String(head) },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so that curl ends with bash.
      detached: true,
    });
    let output = '';
    const arrived = new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk) => {
        output += String(chunk);
        const line = output.split('\n').find((l) => l.startsWith('data: {'));
        if (line) resolve(line);
      });
      child.once('exit', (code) => reject(new Error(`subscription ended (${code}): ${output}`)));
    });
    // The stream is open once its first ping (`:`) has arrived.
    await new Promise<void>((resolve) => {
      const check = () => (output.startsWith(':') ? resolve() : setTimeout(check, 10));
      check();
    });
    const created = (await memoryIn(s.admin, s.ns.a1, 'streamed to the example')).body;
    const line = await arrived;
    process.kill(-(child.pid as number), 'SIGTERM');
    expect(JSON.parse(line.slice('data: '.length))).toEqual({
      data: {
        changes: {
          nextAfter: created.commit.sequence,
          changes: [
            {
              sequence: created.commit.sequence,
              operation: 'memories.create',
              subjects: [
                { type: 'memory', id: created.memory.id, namespaceId: s.ns.a1 },
                { type: 'revision', id: created.revision.id, namespaceId: s.ns.a1 },
              ],
            },
          ],
        },
      },
    });
  });
});
