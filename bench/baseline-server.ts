/**
 * The bench's bare baseline: `node:http` + postgres.js, the same SQL shape as the gateway's hot
 * paths with no validation, no auth and no framework. It is what the gateway is measured
 * against, so it should be a fair, plainly written server, not a strawman.
 *
 *   GET  /memories/{id}   one row by primary key (workspace from `x-service-workspace`)
 *   POST /memories        one transaction: insert the memory, lock and advance the workspace
 *                         head, insert the commit row (begin + 3 statements + commit)
 *   POST /recall          full-text search over the gateway database's search index, with texts
 *
 * Environment (read here only: this file is its own little service): DATABASE_URL, PORT,
 * POOL_SIZE, RECALL_DATABASE_URL (optional), WORKSPACES (comma-separated ids whose head rows
 * are created at start).
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
// postgres.js exactly as the ledger has it installed (the same patched copy; bench/ does not
// depend on it directly).
import postgres from '../packages/ledger/node_modules/postgres';

const env = {
  databaseUrl: process.env.DATABASE_URL ?? '',
  recallDatabaseUrl: process.env.RECALL_DATABASE_URL,
  port: Number(process.env.PORT ?? 0),
  poolSize: Number(process.env.POOL_SIZE ?? 32),
  workspaces: (process.env.WORKSPACES ?? '').split(',').filter(Boolean),
};
if (!env.databaseUrl) throw new Error('DATABASE_URL is required');

const sql = postgres(env.databaseUrl, { max: env.poolSize, onnotice: () => {} });
const recallSql = env.recallDatabaseUrl
  ? postgres(env.recallDatabaseUrl, { max: env.poolSize, onnotice: () => {} })
  : null;

/** Tables shaped like the ledger's (workspace first in every key). */
const BASELINE_SCHEMA = `
  create table if not exists workspace_heads (
    workspace_id text primary key, sequence bigint not null, recorded_at double precision not null);
  create table if not exists commits (
    workspace_id text not null, sequence bigint not null, recorded_at double precision not null,
    operation text not null, actor_id text not null, subject_ids text[] not null,
    primary key (workspace_id, sequence));
  create table if not exists memories (
    workspace_id text not null, id text not null, namespace_id text not null, kind text not null,
    text bytea not null, generation bigint not null, valid_from double precision not null,
    created_at double precision not null, commit_sequence bigint,
    primary key (workspace_id, id));`;

const json = (res: http.ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
};

const readBody = (req: http.IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });

const memoryJson = (row: Record<string, unknown>) => ({
  id: row.id,
  namespace_id: row.namespace_id,
  kind: row.kind,
  text: Buffer.from(row.text as Uint8Array).toString('utf8'),
  generation: Number(row.generation),
  valid_from: row.valid_from,
  created_at: row.created_at,
});

async function getMemory(workspaceId: string, id: string, res: http.ServerResponse) {
  const [row] = await sql`select * from memories where workspace_id = ${workspaceId} and id = ${id}`;
  if (!row) return json(res, 404, { error: { code: 'not_found' } });
  json(res, 200, { memory: memoryJson(row) });
}

async function createMemory(workspaceId: string, input: Record<string, unknown>, res: http.ServerResponse) {
  const id = `mem_${crypto.randomUUID()}`;
  const now = Date.now() / 1000;
  const text = Buffer.from(String(input.text ?? ''), 'utf8');
  const sequence = await sql.begin(async (tx) => {
    await tx`insert into memories (workspace_id, id, namespace_id, kind, text, generation, valid_from, created_at)
      values (${workspaceId}, ${id}, ${String(input.namespace_id)}, ${String(input.kind)}, ${text}, 1,
              ${Number(input.valid_from ?? now)}, ${now})`;
    // The head row is locked last, so it is held for the two round trips that remain.
    const [head] = await tx`update workspace_heads set sequence = sequence + 1, recorded_at = ${now}
      where workspace_id = ${workspaceId} returning sequence`;
    if (!head) throw new Error(`no head row for workspace ${workspaceId}`);
    await tx`insert into commits (workspace_id, sequence, recorded_at, operation, actor_id, subject_ids)
      values (${workspaceId}, ${head.sequence}, ${now}, 'memories.create', 'baseline', ${[id]})`;
    return Number(head.sequence);
  });
  json(res, 200, { memory: { id, generation: 1 }, commit_sequence: sequence });
}

async function recall(workspaceId: string, input: Record<string, unknown>, res: http.ServerResponse) {
  if (!recallSql) return json(res, 404, { error: { code: 'not_found' } });
  const terms = [
    ...new Set(
      String(input.query ?? '')
        .toLowerCase()
        .match(/[\p{L}\p{N}]+/gu) ?? [],
    ),
  ];
  const now = Date.now() / 1000;
  const rows = await recallSql`
    select d.revision_id, d.memory_id, ts_rank(d.tsv, q) as score, r.text
      from search.documents d
      join revisions r on r.workspace_id = d.workspace_id and r.id = d.revision_id,
           to_tsquery('simple', ${terms.join(' | ')}) q
     where d.workspace_id = ${workspaceId} and d.namespace_id = any(${input.namespace_ids as string[]})
       and d.tsv @@ q
       and d.recorded_at <= ${now} and (d.recorded_until is null or d.recorded_until > ${now})
       and d.valid_from <= ${now} and (d.valid_to is null or d.valid_to > ${now})
     order by score desc, d.revision_id
     limit 20`;
  json(res, 200, {
    items: rows.map((r) => ({
      revision_id: r.revision_id,
      memory_id: r.memory_id,
      score: Number(r.score),
      text: Buffer.from(r.text as Uint8Array).toString('utf8'),
    })),
  });
}

const server = http.createServer((req, res) => {
  const workspaceId = String(req.headers['x-service-workspace'] ?? '');
  const url = req.url ?? '/';
  const handle = async () => {
    if (req.method === 'GET' && url.startsWith('/memories/')) return getMemory(workspaceId, url.slice(10), res);
    if (req.method === 'POST' && (url === '/memories' || url === '/recall')) {
      const input = JSON.parse(await readBody(req)) as Record<string, unknown>;
      return url === '/memories' ? createMemory(workspaceId, input, res) : recall(workspaceId, input, res);
    }
    json(res, 404, { error: { code: 'not_found' } });
  };
  handle().catch((error: unknown) => {
    process.stderr.write(`baseline: ${(error as Error).message}\n`);
    if (!res.headersSent) json(res, 500, { error: { code: 'internal' } });
  });
});

await sql.unsafe(BASELINE_SCHEMA);
for (const workspaceId of env.workspaces) {
  await sql`insert into workspace_heads (workspace_id, sequence, recorded_at)
    values (${workspaceId}, 0, ${Date.now() / 1000}) on conflict do nothing`;
}
server.listen(env.port, '127.0.0.1', () => {
  // The bench waits for this line to learn the port.
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    server.close();
    server.closeAllConnections();
    Promise.all([sql.end({ timeout: 2 }), recallSql?.end({ timeout: 2 })]).finally(() => process.exit(0));
  });
}
