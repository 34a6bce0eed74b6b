import { defineConfig } from 'vitest/config';
import { aloneSuites } from './vitest.config';

/** The unit files that run one at a time, after the rest (`pnpm test:unit`; see `aloneSuites`). */
export default defineConfig({
  test: {
    include: aloneSuites,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: false,
    reporters: ['default'],
  },
});
