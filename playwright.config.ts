import { defineConfig, devices } from '@playwright/test';

/**
 * Journeys in Debian's Chromium against the real, built service on a fresh embedded data directory.
 * `npx playwright install` cannot work here; the browser comes from apt (see .ci/run).
 */
const PORT = Number(process.env.E2E_PORT ?? 3100);
export const baseURL = `http://localhost:${PORT}`;

export default defineConfig({
  testDir: './e2e',
  outputDir: './test-results',
  // Two browsers against the one service: every journey signs up its own account and finds its emails by
  // their address, so none sees another's data, and any test may run in either browser: the two end
  // together instead of one finishing a long file alone.
  fullyParallel: true,
  workers: 2,
  retries: 0,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  use: {
    baseURL,
    // A failure keeps the trace's actions, page snapshots, network and console. Its film strip is left out:
    // recording the screen through every test cost a quarter of the suite's CPU time (the failure's own
    // screenshot below still shows where it stopped).
    trace: { mode: 'retain-on-failure', screenshots: false },
    // A missing element fails in seconds, not at the end of a journey's whole budget.
    actionTimeout: 15_000,
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    },
  },
  projects: [{ name: 'chromium', use: { ...devices['Desktop Chrome'], channel: undefined } }],
  webServer: {
    command: `rm -rf e2e/.tmp/${PORT} && node apps/api/dist/main.js`,
    url: `${baseURL}/api/ready`,
    reuseExistingServer: false,
    timeout: 60_000,
    stdout: 'ignore',
    stderr: 'pipe',
    env: {
      PORT: String(PORT),
      PUBLIC_URL: baseURL,
      DATA_DIR: `e2e/.tmp/${PORT}/data`,
      LOG_LEVEL: 'warn',
      // Any free port for the device broker's TLS listener: devices are told the bound one at provisioning.
      MQTT_PORT: '0',
      LOGIN_RATE_LIMIT_MAX: '1000',
      ANONYMOUS_RATE_LIMIT_MAX: '5000',
      ACCESS_TOKEN_TTL_SECONDS: '900',
      // The journeys' own OpenID provider (issuer-discovery.spec.ts) listens on loopback.
      OUTBOUND_ALLOW: '127.0.0.1',
    },
  },
});
