import { defineConfig } from 'vitest/config';

/** Fault and fuzz suites have configs of their own (vitest.faults.config.ts, vitest.fuzz.config.ts). */
export const slowSuites = ['**/test/faults/**', '**/test/fuzz/**'];

/**
 * Files that race real processes and sockets against each other (two gateways starting at once,
 * clients leaving mid-stream, backends killed under a connection): they run alone, after the
 * rest (vitest.alone.config.ts), so that another file's load does not reorder their races.
 */
export const aloneSuites = [
  'services/cli/test/embedded-lock.test.ts',
  'services/gateway/test/changes-subscription.test.ts',
  'packages/ledger/test/connection-loss.test.ts',
  'services/gateway/test/http-edges.test.ts',
];

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts', 'scripts/**/*.test.ts'],
    exclude: ['**/node_modules/**', ...slowSuites, ...aloneSuites],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Two files at once even on two cores: most of a file's time is spent waiting on Postgres,
    // child processes and sockets, so the default (one fewer than the cores) left a core idle.
    // Three gain nothing more: measured, each file then took 1.44x as long (the cores are full).
    maxWorkers: 2,
    minWorkers: 1,
    reporters: ['default'],
  },
});
