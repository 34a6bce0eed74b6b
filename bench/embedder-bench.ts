/**
 * The builtin embedder (USE lite in a niced child process) measured as the service runs it: the
 * time to start (fork, model load), texts a second for single texts and for batches, how long a
 * query waits behind queued documents, and the child's memory (VmRSS idle, VmHWM peak, from
 * /proc/<pid>/status).
 *
 * Usage: pnpm --filter @tms/bench embedder [texts] [niceness] (default 256 texts per batch run,
 * the service's niceness 10; 0 shows the model's own speed on a busy machine, where niced work waits).
 */
import fs from 'node:fs';
import os from 'node:os';
import { BuiltinEmbedder } from '@tms/search';
import { processCpuSeconds } from './cpu';

const BATCH_TEXTS = Number(process.argv[2] ?? 256);
const NICENESS = Number(process.argv[3] ?? 10);
const SINGLE_TEXTS = 64;

const SUBJECTS = ['Ana', 'The client', 'Our team', 'Marco', 'The vendor', 'Priya', 'The board', 'Lena'];
const VERBS = ['prefers', 'asked about', 'rejected', 'scheduled', 'reviewed', 'forgot', 'approved', 'mentioned'];
const OBJECTS = [
  'green tea in the morning before the stand-up meeting',
  'the quarterly budget for the Lisbon office',
  'a refund for the damaged shipment of chairs',
  'moving the release to the second week of March',
  'the new onboarding checklist for contractors',
  'a vegetarian menu for the offsite dinner',
  'the security audit findings on the payment service',
  'switching the database backups to every six hours',
];

/** Memory-like sentences, all different (the model has no cache, but a repeat would flatter nothing either). */
function texts(count: number, salt: string): string[] {
  return Array.from({ length: count }, (_, i) => {
    const pick = <T>(list: T[], n: number) => list[n % list.length] as T;
    return `${pick(SUBJECTS, i)} ${pick(VERBS, Math.floor(i / 8))} ${pick(OBJECTS, Math.floor(i / 64) + i)} (${salt} ${i})`;
  });
}

/**
 * Texts of mixed lengths, as conversation turns are: one to twelve clauses each. The model pads
 * every text of a chunk to the longest one, so the order they reach it in matters here.
 */
function mixedTexts(count: number, salt: string): string[] {
  const clauses = texts(count, salt);
  return clauses.map((text, i) => [text, ...clauses.slice(0, (i * 7) % 12)].join(', and '));
}

/** VmRSS and VmHWM of a process, in MiB. */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 };
}

/**
 * CPU time a process has used (user + system), in ms. Unlike wall time, it does not count the
 * time a busy machine made the niced child wait: it is the model's own cost.
 */
const cpuMsOf = (pid: number) => processCpuSeconds(pid) * 1000;

const mib = (n: number) => `${n.toFixed(0)} MiB`;

interface Measured {
  wallMs: number;
  cpuMs: number;
}

/** Wall time of `work` and the CPU time the child spent meanwhile. */
async function measure(embedder: BuiltinEmbedder, work: () => Promise<unknown>): Promise<Measured> {
  const pid = embedder.pid as number;
  const cpuBefore = cpuMsOf(pid);
  const start = performance.now();
  await work();
  return { wallMs: performance.now() - start, cpuMs: cpuMsOf(pid) - cpuBefore };
}

const rate = (count: number, { wallMs, cpuMs }: Measured) =>
  `${((count * 1000) / wallMs).toFixed(1)} texts/s, ${(wallMs / count).toFixed(1)} ms a text (child CPU ${(cpuMs / count).toFixed(1)} ms a text)`;

async function run(): Promise<void> {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  console.log(`builtin embedder bench, ${new Date().toISOString()}`);
  console.log(
    `machine: ${os.cpus().length} x ${cpu}, ${mib(os.totalmem() / 2 ** 20)}, load ${os.loadavg()[0]?.toFixed(2)}; node ${process.version}`,
  );
  console.log(`command: pnpm --filter @tms/bench embedder ${BATCH_TEXTS} ${NICENESS}\n`);

  const embedder = new BuiltinEmbedder({ niceness: NICENESS });
  try {
    const startedAt = performance.now();
    await embedder.start();
    const startMs = performance.now() - startedAt;
    const pid = embedder.pid as number;
    console.log(
      `start (fork + model load): ${startMs.toFixed(0)} ms (model load inside the child ${embedder.loadTimeMs?.toFixed(0)} ms)`,
    );
    const idle = memoryOf(pid);
    console.log(`child idle after load: VmRSS ${mib(idle.rss)}`);

    await embedder.embed(texts(8, 'warm-up'), 'document');
    const single = await measure(embedder, async () => {
      for (const text of texts(SINGLE_TEXTS, 'single')) await embedder.embed([text], 'query');
    });
    console.log(`single texts, one call each (${SINGLE_TEXTS}): ${rate(SINGLE_TEXTS, single)}`);

    for (const chunkTexts of [1, 4, 8, 16, 32, 64]) {
      const chunked = chunkTexts === 8 ? embedder : new BuiltinEmbedder({ chunkTexts, niceness: NICENESS });
      try {
        await chunked.embed(texts(8, 'warm-up'), 'document');
        const batch = await measure(chunked, () =>
          chunked.embed(texts(BATCH_TEXTS, `batch ${chunkTexts}`), 'document'),
        );
        console.log(`one call of ${BATCH_TEXTS} documents, chunks of ${chunkTexts}: ${rate(BATCH_TEXTS, batch)}`);
      } finally {
        if (chunked !== embedder) await chunked.close();
      }
    }

    for (const orderByLength of [false, true]) {
      const ordered = new BuiltinEmbedder({ niceness: NICENESS, orderByLength });
      try {
        await ordered.embed(texts(8, 'warm-up'), 'document');
        const batch = await measure(ordered, () =>
          ordered.embed(mixedTexts(BATCH_TEXTS, `mixed ${orderByLength}`), 'document'),
        );
        const how = orderByLength ? 'shortest first (the default)' : 'in the order given';
        console.log(
          `one call of ${BATCH_TEXTS} documents of mixed lengths, chunks of 8, ${how}: ${rate(BATCH_TEXTS, batch)}`,
        );
      } finally {
        await ordered.close();
      }
    }

    // The catalog's longest memory text: its first 16 pieces of at most 1000 characters, averaged.
    const sentence = 'Priya reviewed the security audit findings on the payment service and asked for fixes. ';
    const longest = sentence.repeat(Math.ceil(32_768 / sentence.length)).slice(0, 32_768);
    const long = await measure(embedder, () => embedder.embed([longest], 'document'));
    console.log(
      `one text of 32768 characters (16 pieces embedded): ${long.wallMs.toFixed(0)} ms (child CPU ${long.cpuMs} ms)`,
    );

    // A recall's query arriving while the indexer's documents are queued: it waits for the chunk in flight only.
    const queued = embedder.embed(texts(BATCH_TEXTS, 'queued'), 'document');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const query = await measure(embedder, () => embedder.embed(['what does Ana drink in the morning'], 'query'));
    await queued;
    console.log(
      `a query behind ${BATCH_TEXTS} queued documents (chunks of 8): answered in ${query.wallMs.toFixed(0)} ms`,
    );

    const after = memoryOf(pid);
    console.log(`child after the runs: VmRSS ${mib(after.rss)}, peak (VmHWM) ${mib(after.peak)}`);
  } finally {
    await embedder.close();
  }
}

await run();
