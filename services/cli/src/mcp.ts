import { createAgentServer, freshRequestId, serveStdio } from '@tms/agent-tools';
import { composeDomain } from '@tms/composition';
import { DomainError } from '@tms/domain';
import { createLogger } from '@tms/telemetry';
import type { CliEnv } from './env';

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
  const { domain, ledger, embedder } = await composeDomain(env, { holder: 'svc mcp' });
  try {
    try {
      await domain.authenticate(token);
    } catch (error) {
      if (error instanceof DomainError) throw new Error(`TMS_TOKEN was refused (${error.code})`);
      throw error;
    }
    const server = createAgentServer(
      domain,
      { caller: () => domain.authenticate(token), workspaceId: env.TMS_WORKSPACE ?? null, requestId: freshRequestId },
      {
        logger,
        onToolCall: (event) => logger.info({ ...event }, 'tool call'),
      },
    );
    logger.info({ ledger: ledger.driver, workspace: env.TMS_WORKSPACE ?? null }, 'mcp stdio server ready');
    await serveStdio(server);
  } finally {
    await embedder.close().catch(() => undefined);
    await ledger.close();
  }
}
