import { execFile, fork } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { BUILTIN_WORKER_FILE, type BuiltinChunkEvent, BuiltinEmbedder } from '../src/embedders/builtin-embedder';
import { EmbedderUnavailableError } from '../src/embedders/embedder';

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] as number) * (b[i] as number);
  return sum;
}

/** The nice value of one task, field 19 of /proc/<pid>/task/<tid>/stat (after the parenthesised name). */
function niceOf(statFile: string): number {
  const stat = fs.readFileSync(statFile, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[16]);
}

/** Resolves with the outcome of `embed` without throwing, so a test can look at the error. */
async function settle(promise: Promise<Float32Array[]>): Promise<Float32Array[] | Error> {
  return promise.catch((error: Error) => error);
}

describe('the builtin embedder', () => {
  const embedder = new BuiltinEmbedder({ restartDelayMs: 50 });
  afterAll(() => embedder.close());

  it('gives 512-dimension unit vectors, the same for the same text, near for near meanings', async () => {
    const [tea, drink, train, teaAgain] = await embedder.embed(
      [
        'Ana prefers tea',
        'what does Ana drink',
        'The train to Lyon leaves from platform four at noon',
        'Ana prefers tea',
      ],
      'document',
    );
    for (const vector of [tea, drink, train, teaAgain]) {
      expect(vector).toBeInstanceOf(Float32Array);
      expect(vector?.length).toBe(512);
      expect(dot(vector as Float32Array, vector as Float32Array)).toBeCloseTo(1, 4);
    }
    expect(embedder.model).toBe('builtin:use-lite@512');
    expect(embedder.dimensions).toBe(512);
    // Deterministic: the same text in another call gives the same vector.
    const [teaLater] = await embedder.embed(['Ana prefers tea'], 'query');
    expect(Array.from(teaLater as Float32Array)).toEqual(Array.from(tea as Float32Array));
    expect(Array.from(teaAgain as Float32Array)).toEqual(Array.from(tea as Float32Array));
    const near = dot(tea as Float32Array, drink as Float32Array);
    const far = dot(tea as Float32Array, train as Float32Array);
    expect(near).toBeGreaterThan(far);
  });

  it('embeds an empty text and keeps the order of a batch that spans several chunks', async () => {
    const texts = Array.from({ length: 19 }, (_, i) => (i === 7 ? '' : `note ${i}: the meeting moved to room ${i}`));
    const batch = await embedder.embed(texts, 'document');
    expect(batch).toHaveLength(19);
    const one = await embedder.embed([texts[12] as string], 'document');
    expect(Array.from(batch[12] as Float32Array)).toEqual(Array.from(one[0] as Float32Array));
    expect(dot(batch[7] as Float32Array, batch[7] as Float32Array)).toBeCloseTo(1, 4);
  });

  it('runs the model in a child process whose every thread is niced to 19 but the query lane, left at ours', async () => {
    await embedder.start();
    const pid = embedder.pid as number;
    expect(pid).toBeGreaterThan(0);
    expect(pid).not.toBe(process.pid);
    const ours = niceOf(`/proc/${process.pid}/stat`);
    expect(ours).toBeLessThan(19);
    const tasks = fs.readdirSync(`/proc/${pid}/task`);
    expect(tasks.length).toBeGreaterThan(2);
    // The query lane is the child's main thread, which receives every request.
    for (const tid of tasks) expect(niceOf(`/proc/${pid}/task/${tid}/stat`)).toBe(tid === String(pid) ? ours : 19);
    // It does the queries' work; the documents' lane (a niced thread) does none of it.
    const cpuOf = (tid: string) => {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return Number(fields[11]) + Number(fields[12]);
    };
    const before = cpuOf(String(pid));
    for (let i = 0; i < 20; i++) await embedder.embed([`what did Ana say about the budget, take ${i}`], 'query');
    expect(cpuOf(String(pid))).toBeGreaterThan(before);
  });

  it('answers a query while its documents lane works on a chunk', async () => {
    // One chunk (8 texts, under 2000 characters), which takes the documents' lane far longer than
    // a query takes: the query is answered before that chunk, not after it.
    const long = (i: number) => `note ${i}: ${'the quarterly budget review moved to March '.repeat(5)}`;
    let documentsDone = false;
    const documents = embedder
      .embed(
        Array.from({ length: 8 }, (_, i) => long(i)),
        'document',
      )
      .then(() => {
        documentsDone = true;
      });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await embedder.embed(['what is the budget'], 'query');
    expect(documentsDone).toBe(false);
    await documents;
  });

  it('without a query lane (a process that embeds only documents) nices every thread, and still puts queries first', async () => {
    const documentsOnly = new BuiltinEmbedder({ queryLane: false });
    try {
      await documentsOnly.start();
      const pid = documentsOnly.pid as number;
      const tasks = fs.readdirSync(`/proc/${pid}/task`);
      for (const tid of tasks) expect(niceOf(`/proc/${pid}/task/${tid}/stat`)).toBe(19);
      const order: string[] = [];
      const documents = documentsOnly
        .embed(
          Array.from({ length: 48 }, (_, i) => `document ${i} about the quarterly budget review`),
          'document',
        )
        .then(() => order.push('documents'));
      const [query] = await documentsOnly.embed(['what is the budget'], 'query').finally(() => order.push('query'));
      await documents;
      expect(order).toEqual(['query', 'documents']);
      const [same] = await embedder.embed(['what is the budget'], 'query');
      expect(Array.from(query as Float32Array)).toEqual(Array.from(same as Float32Array));
    } finally {
      await documentsOnly.close();
    }
  });

  it('without a documents lane (a process whose indexer runs elsewhere) holds one copy of the model, and still embeds documents', async () => {
    const queriesOnly = new BuiltinEmbedder({ documentLane: false });
    try {
      await Promise.all([queriesOnly.start(), embedder.start()]);
      const pid = queriesOnly.pid as number;
      const residentKiB = (of: number) =>
        Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${of}/status`, 'utf8'))?.[1]);
      const threads = (of: number) => fs.readdirSync(`/proc/${of}/task`).length;
      // No documents' lane: no worker thread, and some 100 MiB less resident than the two copies.
      expect(threads(pid)).toBeLessThan(threads(embedder.pid as number));
      expect(residentKiB(pid)).toBeLessThan(residentKiB(embedder.pid as number) - 50 * 1024);
      // The query lane (the main thread, at our priority) serves both, the same vectors as two lanes give.
      const ours = niceOf(`/proc/${process.pid}/stat`);
      expect(niceOf(`/proc/${pid}/task/${pid}/stat`)).toBe(ours);
      const [document] = await queriesOnly.embed(['the quarterly budget review'], 'document');
      const [same] = await embedder.embed(['the quarterly budget review'], 'document');
      expect(Array.from(document as Float32Array)).toEqual(Array.from(same as Float32Array));
    } finally {
      await queriesOnly.close();
    }
    expect(() => new BuiltinEmbedder({ queryLane: false, documentLane: false })).toThrow(RangeError);
  });

  it('holds documents back while its process is busy, never queries', async () => {
    const chunks: BuiltinChunkEvent[] = [];
    const modest = new BuiltinEmbedder({ busyShare: 0.25, chunkTexts: 1, onChunk: (event) => chunks.push(event) });
    try {
      await modest.start();
      const documents = modest.embed(['the quarterly budget review', 'the budget moved to May', 'a note'], 'document');
      // Keep this process's event loop busy (10 ms slices of work, 4 ms pauses: about 70%) until
      // the first chunk is back. The pauses leave the niced documents' lane some CPU while another
      // test file takes the other core: without them the chunk took half a minute in the suite.
      const deadline = performance.now() + 30_000;
      while (chunks.length === 0 && performance.now() < deadline) {
        const slice = performance.now() + 10;
        while (performance.now() < slice) {}
        await new Promise((resolve) => setTimeout(resolve, 4));
      }
      const [busy] = chunks;
      expect(busy?.purpose).toBe('document');
      expect(busy?.loopUtilisation).toBeGreaterThan(0.5);
      // The model may work a quarter of the time: the next document waits three times as long.
      expect(busy?.holdMs).toBeCloseTo((busy?.workedMs as number) * 3, 5);
      // A query during the hold goes at once, and is never held back itself.
      await modest.embed(['what is the budget'], 'query');
      const query = chunks.find((c) => c.purpose === 'query');
      expect(query?.holdMs).toBe(0);
      expect(chunks.indexOf(query as BuiltinChunkEvent)).toBe(1);
      expect(await documents).toHaveLength(3);
      // Once the process idles, documents go without a pause.
      expect(chunks.at(-1)?.holdMs).toBe(0);
    } finally {
      await modest.close();
    }
  });

  it('embeds a text longer than a piece as the mean of its pieces, and lets a query pass it', async () => {
    // 12 000 characters: 13 pieces, two a chunk (2000 characters), so the query goes in between.
    const sentence = 'Ana keeps a tin of green tea in her desk and drinks it every morning. ';
    const long = sentence.repeat(Math.ceil(12_000 / sentence.length)).slice(0, 12_000);
    const order: string[] = [];
    const document = embedder.embed([long], 'document').then((vectors) => {
      order.push('document');
      return vectors;
    });
    const query = embedder.embed(['what does Ana drink'], 'query').then((vectors) => {
      order.push('query');
      return vectors;
    });
    const [[longVector], [queryVector]] = await Promise.all([document, query]);
    expect(order).toEqual(['query', 'document']);
    expect(longVector?.length).toBe(512);
    expect(dot(longVector as Float32Array, longVector as Float32Array)).toBeCloseTo(1, 4);
    const [unrelated] = await embedder.embed(['The train to Lyon leaves from platform four at noon'], 'query');
    expect(dot(longVector as Float32Array, queryVector as Float32Array)).toBeGreaterThan(
      dot(longVector as Float32Array, unrelated as Float32Array),
    );
  });

  it('fails the calls of a killed child with EmbedderUnavailableError, then recovers', async () => {
    await embedder.start();
    const pid = embedder.pid as number;
    const pending = settle(
      embedder.embed(
        Array.from({ length: 40 }, (_, i) => `a long queue of text ${i}`),
        'document',
      ),
    );
    process.kill(pid, 'SIGKILL');
    const failed = await pending;
    expect(failed).toBeInstanceOf(EmbedderUnavailableError);
    expect((failed as Error).message).toMatch(/exited \(signal SIGKILL\)/);
    // Down until the restart: calls fail at once rather than wait.
    expect(await settle(embedder.embed(['right after'], 'query'))).toBeInstanceOf(EmbedderUnavailableError);

    let recovered: Float32Array[] | Error = new Error('never tried');
    for (let attempt = 0; attempt < 100 && !Array.isArray(recovered); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      recovered = await settle(embedder.embed(['Ana prefers tea'], 'query'));
    }
    expect(Array.isArray(recovered)).toBe(true);
    expect(embedder.pid).not.toBe(pid);
    expect((recovered as Float32Array[])[0]?.length).toBe(512);
  });

  it('ends the child at close, after which calls fail', async () => {
    const own = new BuiltinEmbedder();
    await own.start();
    const pid = own.pid as number;
    await own.close();
    expect(fs.existsSync(`/proc/${pid}`)).toBe(false);
    expect(await settle(own.embed(['after close'], 'query'))).toBeInstanceOf(EmbedderUnavailableError);
  });
});

describe('the builtin embedder child', () => {
  it('lets a process whose embedder was never closed end, and ends with it', async () => {
    const tsx = path.resolve(import.meta.dirname, '../../../node_modules/.bin/tsx');
    const script = path.join(import.meta.dirname, 'fixtures/unclosed-embedder.ts');
    // Without the timeout a process held open by its idle child would hang here; with it, it fails.
    const { stdout } = await promisify(execFile)(tsx, [script], { timeout: 60_000 });
    const { dimensions, childPid } = JSON.parse(stdout.trim()) as { dimensions: number; childPid: number };
    expect(dimensions).toBe(512);
    // The child sees its parent go (the IPC channel closes) and exits.
    for (let tries = 0; tries < 100 && fs.existsSync(`/proc/${childPid}`); tries++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(fs.existsSync(`/proc/${childPid}`)).toBe(false);
  });

  /** The child run as builtin-embedder.ts runs it, with `preload` imported first; its first answer to one query. */
  async function firstAnswer(preload: string) {
    const worker = path.join(import.meta.dirname, '../src/embedders', BUILTIN_WORKER_FILE);
    const child = fork(worker, ['10'], {
      execArgv: ['--import', `data:text/javascript,${encodeURIComponent(preload)}`],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    try {
      const answer = await new Promise<{ type: string; vectors?: Float32Array[] }>((resolve, reject) => {
        child.on('message', (message: { type: string; vectors?: Float32Array[] }) => {
          if (message.type === 'ready') child.send({ type: 'embed', id: 1, texts: ['offline'] });
          else resolve(message);
        });
        child.once('exit', (code) => reject(new Error(`worker exited ${code}: ${stderr}`)));
      });
      return { answer, stderr };
    } finally {
      child.kill();
    }
  }

  it('loads the model from its package files with no network connection', async () => {
    // A preload that makes every TCP connection and fetch fail, and says so on stderr: the model
    // loads and answers all the same, and nothing was attempted.
    const { answer, stderr } = await firstAnswer(`
      import net from 'node:net';
      process.stderr.write('PRELOADED\\n');
      net.Socket.prototype.connect = function () { process.stderr.write('NETWORK connect\\n'); throw new Error('no network'); };
      globalThis.fetch = async (url) => { process.stderr.write('NETWORK fetch ' + url + '\\n'); throw new Error('no network'); };
    `);
    expect(answer.type).toBe('vectors');
    expect(answer.vectors?.[0]?.length).toBe(512);
    expect(stderr).toContain('PRELOADED');
    expect(stderr).not.toContain('NETWORK');
  });

  it('loads the model when the runtime starts slower than the weights are read', async () => {
    // A busy machine can make the wasm runtime's start finish after the weights are read, and the
    // weights need it. Not reliably produced for real, so a preload delays every WebAssembly
    // instantiation by a second (tfjs's wasm backend starts with one).
    const { answer, stderr } = await firstAnswer(`
      const instantiate = WebAssembly.instantiate;
      WebAssembly.instantiate = async (...args) => {
        process.stderr.write('DELAYED\\n');
        await new Promise((resolve) => setTimeout(resolve, 1000));
        return instantiate(...args);
      };
    `);
    expect(stderr).toContain('DELAYED');
    expect(answer.type).toBe('vectors');
    expect(answer.vectors?.[0]?.length).toBe(512);
  });
});
