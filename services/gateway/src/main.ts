import { DEV_SUBJECT } from '@tms/auth';
import { EmbeddedLedgerLockedError } from '@tms/ledger';
import { parseEnv } from './env';
import { startGateway } from './gateway';
import { quickstartBanner } from './quickstart';

let env: ReturnType<typeof parseEnv>;
try {
  env = parseEnv(process.env);
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(1);
}

let gateway: Awaited<ReturnType<typeof startGateway>>;
try {
  gateway = await startGateway(env);
} catch (error) {
  // Another process owns the embedded ledger: its one-line reason, not a stack trace.
  if (!(error instanceof EmbeddedLedgerLockedError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}
gateway.logger.info({ port: gateway.port, ledger: gateway.ledger.driver }, 'gateway listening');
if (gateway.devIssuer) {
  const token = await gateway.devIssuer.sessionToken(DEV_SUBJECT);
  process.stdout.write(quickstartBanner(`http://localhost:${gateway.port}`, token));
}

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    gateway.logger.info({ signal }, 'shutting down');
    gateway.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
