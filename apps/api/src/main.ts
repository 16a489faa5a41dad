import { buildApp, SECRETS_UNENCRYPTED_WARNING } from './app.js';
import { loadConfig } from './config.js';

/** Starts and stops; nothing else (house style 4). */
const config = loadConfig();
const app = await buildApp(config);

let closing = false;
async function shutdown(signal: string) {
  if (closing) return;
  closing = true;
  app.log.info({ signal }, 'shutting down: finishing in-flight requests');
  const force = setTimeout(() => process.exit(1), 15_000);
  force.unref();
  try {
    await app.close();
    process.exit(0);
  } catch (err) {
    app.log.error({ err }, 'shutdown failed');
    process.exit(1);
  }
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));

await app.listen({ host: config.host, port: config.port });
const url = config.publicUrl;
app.log.info(`Latchkey is running at ${url}`);
// The one line a person starting `npm start` looks for.
console.log(`\n  Latchkey portal: ${url}\n  API docs:        ${url}${config.apiPrefix}/docs\n`);
if (!config.secretsEncryptionKey) console.warn(`  Warning: ${SECRETS_UNENCRYPTED_WARNING}\n`);
