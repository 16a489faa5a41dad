import { defineConfig } from 'vitest/config';

/** The scale-out suite: real processes of the built service; run after `npm run build`. */
export default defineConfig({
  test: { include: ['test/scale/**/*.test.ts'], testTimeout: 60_000, hookTimeout: 120_000, pool: 'forks' },
});
