import { defineConfig } from 'vitest/config';

/**
 * Fault tests (`pnpm test:faults`): processes killed, connections cut, Postgres stopped. One file
 * at a time, since they load the machine and some stop a database server; each file bounds its own
 * rounds and time (FAULT_ROUNDS / FAULT_SECONDS make a longer run).
 */
export default defineConfig({
  test: {
    include: ['packages/*/test/faults/**/*.test.ts', 'services/*/test/faults/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: false,
    reporters: ['default'],
  },
});
