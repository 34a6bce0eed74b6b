import { createAgentServer, freshRequestId, serveStdio } from '@tms/agent-tools';
import { composeDomain, rateLimitStoreLog } from '@tms/composition';
import { authFailureReason, DomainError } from '@tms/domain';
import { Indexer } from '@tms/search';
import { createLogger } from '@tms/telemetry';
import type { CliEnv } from './env';

/**
 * Whether `svc mcp` indexes: always on the embedded ledger, which no other process can open
 * while it runs (recall would stay `pending` for ever); on Postgres as the gateway decides it,
 * with `INDEXER` (several indexers share the work by workspace locks).
 */
export const runsIndexer = (env: Pick<CliEnv, 'DATABASE_URL' | 'INDEXER'>) =>
  !env.DATABASE_URL || env.INDEXER === 'embedded';

/**
 * `svc mcp`: the agent tools over stdio, acting as the holder of TMS_TOKEN in TMS_WORKSPACE.
 * The ledger and token verifier are composed as in the gateway; the token is checked once at
 * start (a one-line failure) and resolved again on every call, so expiry and revocation apply.
 */
export async function serveMcpStdio(env: CliEnv): Promise<void> {
  const token = env.TMS_TOKEN;
  if (!token) throw new Error('svc mcp needs TMS_TOKEN (a bearer token of the acting user)');
  // The gateway's log schema, on stderr: stdout carries nothing but MCP messages.
  const logger = createLogger({ service: 'tms-mcp', level: env.LOG_LEVEL, stderr: true });
  const composed = await composeDomain(env, {
    holder: 'svc mcp',
    rateLimitStore: rateLimitStoreLog(logger),
    embedsDocuments: runsIndexer(env),
  });
  const { domain, ledger, search, embedder } = composed;
  const indexer =
    runsIndexer(env) && search.name !== 'none'
      ? new Indexer(ledger, search, {
          pollMs: 500,
          embedder,
          onError: (error, attempt, arm) =>
            logger.warn({ err: error, attempt, arm }, 'indexing failed; retrying with backoff'),
        })
      : null;
  let indexerDone: Promise<void> | undefined;
  try {
    try {
      await domain.authenticate(token);
    } catch (error) {
      // The reason (an expired token, a revoked credential) is the caller's own to know.
      const reason = authFailureReason(error);
      if (error instanceof DomainError) {
        throw new Error(`TMS_TOKEN was refused (${error.code}${reason ? `: ${reason}` : ''})`);
      }
      throw error;
    }
    const server = createAgentServer(
      domain,
      { caller: () => domain.authenticate(token), workspaceId: env.TMS_WORKSPACE ?? null, requestId: freshRequestId },
      {
        logger,
        toolSet: env.MCP_TOOLS,
        onToolCall: (event) => logger.info({ ...event }, 'tool call'),
      },
    );
    indexerDone = indexer?.run().catch((error) => logger.error({ err: error }, 'embedded indexer stopped'));
    logger.info(
      { ledger: ledger.driver, workspace: env.TMS_WORKSPACE ?? null, indexer: indexer ? search.name : null },
      'mcp stdio server ready',
    );
    await serveStdio(server);
  } finally {
    indexer?.stop();
    await indexerDone;
    await composed.close();
  }
}
