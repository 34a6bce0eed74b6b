import { defineConfig } from 'vitest/config';

/** Fault and fuzz suites have configs of their own (vitest.faults.config.ts, vitest.fuzz.config.ts). */
export const slowSuites = ['**/test/faults/**', '**/test/fuzz/**'];

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts', 'scripts/**/*.test.ts'],
    exclude: ['**/node_modules/**', ...slowSuites],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two files at once even on two cores: most of a file's time is spent waiting on Postgres,
    // child processes and sockets, so the default (one fewer than the cores) left a core idle.
    maxWorkers: 2,
    minWorkers: 1,
    reporters: ['default'],
  },
});
