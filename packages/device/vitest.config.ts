import { defineConfig } from 'vitest/config';

/** The device's tests: pure checks, actuators running real programs, and the agent against an in-process broker. */
export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    testTimeout: 20_000,
    pool: 'forks',
  },
});
