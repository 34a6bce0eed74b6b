import { defineConfig } from 'vitest/config';

/** Property-based fuzzing of the three transports (`pnpm test:fuzz`; FUZZ_RUNS makes a longer run). */
export default defineConfig({
  test: {
    include: ['packages/*/test/fuzz/**/*.test.ts', 'services/*/test/fuzz/**/*.test.ts'],
    testTimeout: 600_000,
    hookTimeout: 120_000,
    pool: 'forks',
    reporters: ['default'],
  },
});
