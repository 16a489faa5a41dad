import { buildApp, SECRETS_UNENCRYPTED_WARNING } from './app.js';
import type { Config } from './config.js';
import { registerAdminRoutes, serveAdminSocket } from './backup.js';
import { checkPorts, PortError, portProblem, servicePorts, type ServicePort } from './port-check.js';

/**
 * Starts and stops; nothing else. SIGTERM (a rolling restart): first the drain (SHUTDOWN_DRAIN_SECONDS, 5 s
 * by default) — GET /ready answers 503 so a load balancer that probes it stops sending new requests, while
 * everything still arriving is served (each answer closing its connection); then the port stops taking
 * connections, requests in flight finish (their kept-alive sockets are told to close), live-update streams
 * end at once with a reconnect hint, the webhook workers stop fetching and leave what is queued to the
 * other instances, and the database closes: 15 s at most after the drain. SIGINT (a person at a terminal)
 * skips the drain. A proxy that does not probe readiness (nginx without active health checks) gains nothing
 * from the drain: docs/deploy.md, rolling restarts.
 */
export async function run(config: Config): Promise<void> {
  // Every port is checked before anything starts, so a busy one costs no start-up and leaves no log of a
  // server that then fails: one line naming the variable to change, exit 1.
  const ports = servicePorts(config);
  try {
    await checkPorts(ports);
  } catch (error) {
    if (error instanceof PortError) exitWith(error.message);
    throw error;
  }
  const app = await buildApp(config, { adminRoutes: registerAdminRoutes });
  // Taken between the check and the listen (another program started meanwhile): the same line.
  async function open<T>(variable: ServicePort['variable'], listen: () => Promise<T>): Promise<T> {
    try {
      return await listen();
    } catch (error) {
      const port = ports.find((p) => p.variable === variable);
      const problem = port && portProblem(port, error);
      if (!problem) throw error;
      await app.close().catch(() => undefined);
      return exitWith(problem);
    }
  }

  let closing = false;
  async function shutdown(signal: string) {
    if (closing) return;
    closing = true;
    const drainMs = signal === 'SIGTERM' ? config.shutdown.drainMs : 0;
    app.lifecycle.draining = true;
    if (drainMs > 0) {
      app.log.info({ signal, drainMs }, 'shutting down: not ready, still serving while the load balancer notices');
      await new Promise((resolve) => setTimeout(resolve, drainMs));
    }
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    // Stop accepting at once, before anything else: a connection made while close() runs its hooks would be
    // answered 503, which a load balancer cannot pass on for a POST; refused, it goes to another instance.
    app.server.close();
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

  // The embedded database's backups go through the running service (docs/decisions/0011-backups.md).
  await serveAdminSocket(app);
  await open('PORT', () => app.listen({ host: config.host, port: config.port }));
  const metricsAt = await open('METRICS_PORT', () => app.metrics.listen());
  // The embedded device broker's mutual-TLS port (none with an external broker, MQTT_URL).
  const mqttPort = await open('MQTT_PORT', () => app.mqtt.listen());
  if (mqttPort !== null) app.log.info(`Devices connect over MQTT with TLS on port ${mqttPort}`);
  if (metricsAt) app.log.info(`Metrics at ${metricsAt}/metrics`);
  const url = config.publicUrl;
  app.log.info(`Latchkey is running at ${url}`);
  // The one line a person starting `npm start` looks for.
  console.log(`\n  Latchkey portal: ${url}\n  API docs:        ${url}${config.apiPrefix}/docs\n`);
  if (!config.secretsEncryptionKey) console.warn(`  Warning: ${SECRETS_UNENCRYPTED_WARNING}\n`);
}

/** A problem the person starting the service fixes with a variable: its line alone, no stack, exit 1. */
function exitWith(message: string): never {
  console.error(`latchkey: ${message}`);
  process.exit(1);
}
