/**
 * `svc export` at scale on Postgres: time and peak RSS of the real CLI process exporting a
 * workspace of 0, N/10 and N memories (default N = 100000), to show that memory stays flat.
 * Usage: pnpm --filter @tms/bench export [N].
 *
 * Only the workspace and its namespace go through the domain. The memories are written as the
 * rows `memories.create` leaves (commit, memory, revision with a corpus text), a few thousand per
 * transaction through the ledger's multi-row insert collector: the write path is not what is
 * measured here, and going through it would take most of an hour on a small machine.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TokenVerifier } from '@tms/auth';
import { OPERATIONS_BY_NAME, type Operation } from '@tms/catalog';
import { type Caller, Domain } from '@tms/domain';
import { InsertCollector, Ledger, newId, schema } from '@tms/ledger';
import { createTestDatabase, enrolledSessionCaller } from '@tms/testkit';
import { textFor } from './corpus';

const N = Number(process.argv[2] ?? 100_000);
const SEED_BATCH = 2000;
const HEAP_CAP_MB = 64;
const ROOT = path.resolve(import.meta.dirname, '..');

async function main() {
  const database = await createTestDatabase('tms_export_bench');
  const ledger = await Ledger.open({ databaseUrl: database.url });
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-export-bench-'));
  try {
    await ledger.migrate();
    const domain = new Domain(ledger, new TokenVerifier({}), null);
    const caller: Caller = await enrolledSessionCaller(ledger, 'bench', 'bench-user');
    const call = async (name: string, body: object, workspace: string | null) =>
      JSON.parse(
        (
          await domain.execute(
            OPERATIONS_BY_NAME.get(name) as Operation,
            { params: {}, query: {}, body },
            { caller, requestId: 'bench', selectedWorkspaceId: workspace, idempotencyKey: newId('key') },
          )
        ).json,
      );
    const ws = (await call('workspaces.create', { name: 'export bench' }, null)).workspace.id as string;
    const ns = (await call('namespaces.create', { parent_id: null, name: 'bulk' }, ws)).namespace.id as string;

    let written = 0;
    const seedTo = async (target: number) => {
      while (written < target) {
        const count = Math.min(SEED_BATCH, target - written);
        await ledger.transaction(
          async (stores) => {
            const first = await stores.commits.allocateMany(ws, count);
            const collector = new InsertCollector();
            for (let k = 0; k < count; k += 1) {
              const sequence = first.sequence + k;
              const recordedAt = first.recordedAt;
              const memoryId = newId('mem');
              const revisionId = newId('rev');
              collector.commit({
                workspaceId: ws,
                sequence,
                recordedAt,
                operation: 'memories.create',
                actorId: caller.actorId,
                subjectIds: [memoryId, revisionId],
              });
              collector.add(schema.memories, {
                workspaceId: ws,
                id: memoryId,
                namespaceId: ns,
                kind: 'claim',
                generation: 1,
                createdAt: recordedAt,
                purgedAt: null,
              });
              collector.add(schema.revisions, {
                workspaceId: ws,
                id: revisionId,
                memoryId,
                namespaceId: ns,
                kind: 'claim',
                generation: 1,
                text: textFor(written + k),
                status: 'candidate',
                validFrom: 0,
                recordedAt,
                commitSequence: sequence,
                evidenceIds: [],
                supportRevisionIds: [],
              });
            }
            await collector.flush(stores.db, null);
          },
          { retry: false },
        );
        written += count;
      }
    };

    /** With `heapMb`, V8's old space is capped: finishing proves the live heap stays under it. */
    const exportOnce = (heapMb: number | null = null) => {
      const file = path.join(out, `export-${written}.ndjson`);
      const heapFlag = heapMb === null ? [] : [`--max-old-space-size=${heapMb}`];
      // One process (node with tsx's loader), so that its peak RSS is the export's own.
      const run = spawnSync(
        '/usr/bin/time',
        ['-f', '%e %M', process.execPath, ...heapFlag, '--import', 'tsx', 'services/cli/src/main.ts', 'export'].concat([
          '--workspace',
          ws,
          '--output',
          file,
        ]),
        { cwd: ROOT, env: { ...process.env, DATABASE_URL: database.url }, encoding: 'utf8' },
      );
      if (run.status !== 0) throw new Error(`svc export failed: ${run.stderr}`);
      const lines = run.stderr.trim().split('\n');
      const [seconds, maxKb] = (lines.at(-1) as string).split(' ').map(Number) as [number, number];
      const summary = lines.findLast((l) => l.startsWith('exported ')) ?? '';
      const bytes = fs.statSync(file).size;
      fs.rmSync(file);
      return { memories: written, heapMb, seconds, rssMb: maxKb / 1024, bytes, summary };
    };

    const results = [];
    for (const target of [0, Math.round(N / 10), N]) {
      const started = performance.now();
      await seedTo(target);
      process.stderr.write(`seeded ${written} memories in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
      results.push(exportOnce());
      // RSS grows with V8's lazy collection; the same export with a capped heap shows its need.
      if (target > 0) results.push(exportOnce(HEAP_CAP_MB));
    }

    const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
    const lines = [
      `machine: ${os.cpus().length} x ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, load ${os.loadavg()[0]?.toFixed(1)} (1 min)`,
      ...results.map(
        (r) =>
          `${String(r.memories).padStart(7)} memories${r.heapMb === null ? '' : ` (old space capped at ${r.heapMb} MiB)`}: ${r.seconds.toFixed(1)} s wall (process start included), peak RSS ${r.rssMb.toFixed(0)} MiB, ${(r.bytes / 2 ** 20).toFixed(1)} MiB of NDJSON; ${r.summary}`,
      ),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await ledger.close();
    await database.drop();
    fs.rmSync(out, { recursive: true, force: true });
  }
}

await main();
