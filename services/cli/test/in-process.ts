import path from 'node:path';
import { Ledger } from '@tms/ledger';
import type { CliEnv } from '../src/env';
import { type CliIo, runCli } from '../src/program';

/** The CLI in this process with `env` as its environment (and `stdin` what `-` reads); its output captured. */
export async function runInProcess(argv: string[], env: () => Promise<CliEnv>, stdin?: NodeJS.ReadableStream) {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    env,
    ...(stdin ? { stdin } : {}),
  };
  const code = await runCli(argv, io);
  return { code, stdout, stderr };
}

/** Open the test's ledger (Postgres at `databaseUrl`, else PGlite under `dataDir`) for `use`, then close it. */
export async function withTestLedger<T>(
  place: { databaseUrl?: string | undefined; dataDir: string },
  use: (ledger: Ledger) => Promise<T>,
): Promise<T> {
  const ledger = await Ledger.open(
    place.databaseUrl ? { databaseUrl: place.databaseUrl } : { dataDir: path.join(place.dataDir, 'pglite') },
  );
  try {
    return await use(ledger);
  } finally {
    await ledger.close();
  }
}
