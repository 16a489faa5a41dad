import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';

const apiDir = path.resolve(import.meta.dirname, '../..');

export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  logs: string[];
  exited: Promise<number | null>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

/**
 * Starts the built service (dist/main.js) as a real process; logs are kept line by line. SIGTERM closes at
 * once (no drain) unless env sets SHUTDOWN_DRAIN_SECONDS: these tests stop services often.
 */
export async function startService(env: Record<string, string>): Promise<ServiceProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, ['dist/main.js'], {
    cwd: apiDir,
    env: { PATH: process.env.PATH ?? '', PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: url, LOG_LEVEL: 'info', MQTT_PORT: '0', SHUTDOWN_DRAIN_SECONDS: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  let buf = '';
  child.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    const lines = buf.split('\n');
    buf = lines.pop() ?? '';
    logs.push(...lines.filter(Boolean));
  });
  child.stderr!.on('data', (d: Buffer) => logs.push(d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { url, child, logs, exited };
}

/**
 * Polls /api/ready until it answers 200. The default is a cap for a service that never comes up, not a
 * start-up budget: on CI this suite runs beside the web suite, so a start may wait its turn for a core.
 */
export async function waitReady(url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(`${url}/api/ready`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} not ready after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * `count` POSTs of `body` to `url` + `p` that are in flight at the service when this resolves: each is sent
 * on a connection the service has already accepted (opened by a GET /api/health it answered), and the
 * service has read it — the kernel holds nothing more of it for the service's socket
 * (/proc/net/tcp's receive queue). A request merely sent may still wait in the listen backlog or a socket
 * buffer, where a closing service rightly refuses it; one that has been read must be answered. Resolves
 * with each request's status, to be awaited once the test has done what it does while they run.
 */
export async function requestsInFlight(url: string, p: string, body: unknown, count: number): Promise<{ statuses: Promise<number[]> }> {
  const { hostname, port } = new URL(url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: count });
  const send = (method: string, target: string, payload?: string) => {
    const req = http.request({ host: hostname, port, method, path: target, agent, headers: payload ? { 'content-type': 'application/json' } : {} });
    const status = new Promise<number>((resolve, reject) => {
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
    });
    const sentFrom = new Promise<number>((resolve) => req.on('finish', () => resolve(req.socket?.localPort ?? 0)));
    req.end(payload);
    return { status, sentFrom };
  };
  await Promise.all(Array.from({ length: count }, () => send('GET', '/api/health').status));
  const posts = Array.from({ length: count }, () => send('POST', `/api${p}`, JSON.stringify(body)));
  // Held from the start, so a request that fails while this waits fails the wait, not the process later.
  const statuses = Promise.all(posts.map((post) => post.status)).finally(() => agent.destroy());
  const failed = statuses.then(() => new Promise<never>(() => {}));
  const clientPorts = await Promise.race([Promise.all(posts.map((post) => post.sentFrom)), failed]);
  const deadline = Date.now() + 30_000;
  while (!readByServer(Number(port), clientPorts)) {
    if (Date.now() > deadline) throw new Error(`the service at ${url} did not read ${count} requests within 30 s`);
    await Promise.race([new Promise((r) => setTimeout(r, 5)), failed]);
  }
  return { statuses };
}

/** Whether the service's end of each loopback connection from `clientPorts` to `serverPort` has nothing left unread. */
function readByServer(serverPort: number, clientPorts: number[]): boolean {
  const hex = (n: number) => n.toString(16).toUpperCase().padStart(4, '0');
  const rows = fs.readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1).map((line) => line.trim().split(/\s+/));
  return clientPorts.every((clientPort) => {
    // sl, local address, remote address, state, tx_queue:rx_queue
    const row = rows.find((r) => r[1]?.endsWith(`:${hex(serverPort)}`) && r[2]?.endsWith(`:${hex(clientPort)}`));
    return row !== undefined && Number.parseInt(row[4]!.split(':')[1]!, 16) === 0;
  });
}

/**
 * A TCP proxy in front of PostgreSQL, so a test can make the database unreachable for one service
 * (and bring it back) without stopping the server other tests use.
 */
export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1') {
  const sockets = new Set<net.Socket>();
  let server: net.Server | null = null;
  const port = await freePort();
  const open = () =>
    new Promise<void>((resolve) => {
      server = net.createServer((client) => {
        const upstream = net.connect(targetPort, targetHost);
        sockets.add(client).add(upstream);
        client.pipe(upstream).pipe(client);
        const drop = () => {
          client.destroy();
          upstream.destroy();
          sockets.delete(client);
          sockets.delete(upstream);
        };
        client.on('error', drop).on('close', drop);
        upstream.on('error', drop).on('close', drop);
      });
      server.listen(port, '127.0.0.1', () => resolve());
    });
  await open();
  return {
    port,
    /** Refuse new connections and cut the open ones: the database is "down". */
    cut: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        sockets.clear();
        if (server) server.close(() => resolve());
        else resolve();
        server = null;
      }),
    restore: open,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        if (server) server.close(() => resolve());
        else resolve();
      }),
  };
}
