import net from 'node:net';
import type { Config } from './config.js';

/** A port the service listens on, and the variable that sets it. */
export interface ServicePort {
  variable: 'PORT' | 'MQTT_PORT' | 'METRICS_PORT';
  host: string;
  port: number;
}

/** A port that cannot be listened on: its message is one line naming the variable to change. */
export class PortError extends Error {}

/** The ports `npm start` opens: HTTP, the embedded broker's TLS (none with MQTT_URL), and metrics when set. */
export function servicePorts(config: Config): ServicePort[] {
  const ports: ServicePort[] = [{ variable: 'PORT', host: config.host, port: config.port }];
  if (!config.mqtt.url) ports.push({ variable: 'MQTT_PORT', host: config.host, port: config.mqtt.port });
  if (config.metrics.port !== undefined) ports.push({ variable: 'METRICS_PORT', host: config.metrics.host, port: config.metrics.port });
  return ports;
}

/** The one line for a listen that failed on `p`, or undefined for an error that is not about the port. */
export function portProblem(p: ServicePort, error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE')
    return `Port ${p.port} (${p.variable}) is already in use on ${p.host}: stop the program using it, or set ${p.variable} to a free port (e.g. ${p.variable}=${p.port + 1} scripts/latchkey start)`;
  if (code === 'EACCES')
    return `Port ${p.port} (${p.variable}) may not be opened by this user on ${p.host}: set ${p.variable} to a port above 1023`;
  if (code === 'EADDRNOTAVAIL')
    return `${p.host} is not an address of this machine, so port ${p.port} (${p.variable}) cannot be opened there: check ${p.variable === 'METRICS_PORT' ? 'METRICS_HOST' : 'HOST'}`;
  return undefined;
}

/**
 * Before anything starts: every port is free to listen on, and no two share a number. Throws a PortError
 * naming the variable to change. Port 0 (any free port) is not checked.
 */
export async function checkPorts(ports: ServicePort[]): Promise<void> {
  const fixed = ports.filter((p) => p.port !== 0);
  for (const [i, p] of fixed.entries()) {
    const other = fixed.slice(0, i).find((q) => q.port === p.port);
    if (other) throw new PortError(`${other.variable} and ${p.variable} are both ${p.port}: set ${p.variable} to another port`);
  }
  for (const p of fixed) {
    const server = net.createServer();
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen({ host: p.host, port: p.port, exclusive: true }, () => resolve());
      });
    } catch (error) {
      const problem = portProblem(p, error);
      if (problem) throw new PortError(problem);
      throw error;
    } finally {
      await new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
    }
  }
}
