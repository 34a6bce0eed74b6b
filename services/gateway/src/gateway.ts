import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { DEV_ISSUER, DEV_SUBJECT, DevIssuer, type IssuerConfig, TokenVerifier } from '@tms/auth';
import { Domain } from '@tms/domain';
import { Ledger } from '@tms/ledger';
import pino, { type Logger } from 'pino';
import { createApp } from './app';
import type { GatewayEnv } from './env';
import { GatewayMetrics } from './metrics';

export interface RunningGateway {
  url: string;
  port: number;
  ledger: Ledger;
  devIssuer: DevIssuer | null;
  logger: Logger;
  close(): Promise<void>;
}

export interface GatewayOptions {
  /** Count SQL statements (tests). */
  onQuery?: (sqlText: string) => void;
  logger?: Logger;
  /** Operation timeout override (tests provoke timeouts with a short one). */
  timeoutMs?: number;
}

/** Compose and start the gateway from a parsed environment. */
export async function startGateway(env: GatewayEnv, options: GatewayOptions = {}): Promise<RunningGateway> {
  const logger =
    options.logger ?? pino({ level: env.LOG_LEVEL, redact: ['req.headers.authorization', 'authorization'] });
  const embedded = !env.DATABASE_URL;
  const ledger = await Ledger.open({
    databaseUrl: env.DATABASE_URL,
    dataDir: embedded ? path.join(env.DATA_DIR, 'pglite') : undefined,
    onQuery: options.onQuery,
  });
  // PGlite admits one process at a time, so the embedded ledger migrates itself at start;
  // on Postgres, `pnpm svc migrate` does it and /readyz waits for it.
  if (embedded) await ledger.migrate();

  const sessions: IssuerConfig[] = [];
  if (env.SESSION_ISSUER && env.SESSION_JWKS_URI && env.SESSION_AUDIENCE) {
    sessions.push({ issuer: env.SESSION_ISSUER, jwksUri: env.SESSION_JWKS_URI, audience: env.SESSION_AUDIENCE });
  }
  let devIssuer: DevIssuer | null = null;
  if (env.DEV_AUTH === '1') {
    devIssuer = await DevIssuer.loadOrCreate(env.DATA_DIR);
    sessions.push(devIssuer.config);
    await ledger.stores.directory.enroll(DEV_ISSUER, DEV_SUBJECT, Date.now() / 1000);
  }
  const oauth =
    env.OAUTH_ISSUER && env.OAUTH_JWKS_URI && env.OAUTH_AUDIENCE
      ? { issuer: env.OAUTH_ISSUER, jwksUri: env.OAUTH_JWKS_URI, audience: env.OAUTH_AUDIENCE }
      : undefined;

  const domain = new Domain(ledger, new TokenVerifier({ sessions, oauth }));
  const server = createApp({ domain, ledger, metrics: new GatewayMetrics(), logger, timeoutMs: options.timeoutMs });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(env.PORT, env.HOST, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    ledger,
    devIssuer,
    logger,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await ledger.close();
    },
  };
}
