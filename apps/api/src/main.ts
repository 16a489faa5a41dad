import { loadConfig } from './config.js';

/**
 * The entry point: traces first when configured (src/tracing.ts must be in place before pg and http are
 * loaded), then the service (src/server.ts). The bundle splits here (apps/api/build.mjs), so with tracing
 * off nothing of OpenTelemetry is loaded.
 */
const config = loadConfig();
if (config.tracing.endpoint) {
  const { startTracing } = await import('./tracing.js');
  startTracing(config.tracing);
}
const { run } = await import('./server.js');
await run(config);
