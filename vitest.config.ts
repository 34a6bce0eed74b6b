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
    reporters: ['default'],
  },
});
