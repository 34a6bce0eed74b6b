import type { CliEnv } from '../src/env';
import { type CliIo, runCli } from '../src/program';

/** The CLI in this process with `env` as its environment; its output captured. */
export async function runInProcess(argv: string[], env: () => Promise<CliEnv>) {
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
  };
  const code = await runCli(argv, io);
  return { code, stdout, stderr };
}
