import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIPv4, type AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { MAX_DIRECT_ACCESS_ENDPOINTS, MAX_OPERATION_LENGTH, deviceRefusals, operationErrors } from '@latchkey/contract';
import { isMalformed } from './refusals.js';
import type { HandleResult, LockController } from './controller.js';

/**
 * The lock's own door for a phone on the same network: `POST /execute` with the user's compact JWS as
 * the body (text/plain, or a JSON string) is checked from the last config alone, exactly like one from
 * the platform. 204 when done, 403 `{code, message}` with the reason when refused, 400 when the body is
 * not an operation. Any origin may call it: the signature is the trust, not the caller. An address whose
 * operations were refused `max` times within a window is answered 429 until the window ends, without
 * its operations being checked.
 */

/** Refusals (400 or 403) one client address may have within a window before it is answered 429. */
const LOCAL_REFUSAL_LIMIT = { max: 10, windowMs: 60_000 };
/** Addresses remembered at once; past it the one seen longest ago is forgotten. */
const MAX_ADDRESSES = 10_000;

/** Counts refusals per client address, in fixed windows. */
class RefusalLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly max = LOCAL_REFUSAL_LIMIT.max,
    private readonly windowMs = LOCAL_REFUSAL_LIMIT.windowMs,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Seconds until `address` may try again; 0 when it may now. */
  blockedFor(address: string): number {
    const window = this.windows.get(address);
    if (!window || window.count < this.max) return 0;
    const left = window.start + this.windowMs - this.clock();
    return left > 0 ? Math.ceil(left / 1000) : 0;
  }

  refused(address: string): void {
    const now = this.clock();
    const window = this.windows.get(address);
    this.windows.delete(address);
    if (window && now - window.start < this.windowMs) {
      window.count++;
      this.windows.set(address, window);
      return;
    }
    if (this.windows.size >= MAX_ADDRESSES) this.windows.delete(this.windows.keys().next().value!);
    this.windows.set(address, { start: now, count: 1 });
  }
}

export interface LocalHttpOptions {
  controller: LockController;
  port: number;
  host?: string;
  /** Called with every decision (204 or 403) and its operation, so it can be reported to the platform. */
  onOutcome?: (result: HandleResult, jws: string) => void;
  /** Refusals per client address before 429 (default LOCAL_REFUSAL_LIMIT). */
  refusalLimit?: { max: number; windowMs: number };
}

export async function startLocalHttp({ controller, port, host = '0.0.0.0', onOutcome, refusalLimit = LOCAL_REFUSAL_LIMIT }: LocalHttpOptions): Promise<{ server: Server; port: number }> {
  const limiter = new RefusalLimiter(refusalLimit.max, refusalLimit.windowMs);
  const server = createServer((request, response) => {
    void serve(request, response, controller, limiter, onOutcome);
  });
  server.requestTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return { server, port: (server.address() as AddressInfo).port };
}

async function serve(request: IncomingMessage, response: ServerResponse, controller: LockController, limiter: RefusalLimiter, onOutcome?: (result: HandleResult, jws: string) => void) {
  response.setHeader('access-control-allow-origin', '*');
  if (request.method === 'OPTIONS') {
    // A browser's preflight: the SDK posts `application/jwt` (some clients add their bearer token, which the
    // endpoint ignores). A page on a public origin asks Chromium's private-network question too: yes.
    const privateNetwork = request.headers['access-control-request-private-network'] === 'true' ? { 'access-control-allow-private-network': 'true' } : {};
    response.writeHead(204, { 'access-control-allow-methods': 'POST', 'access-control-allow-headers': 'content-type, authorization', 'access-control-max-age': '600', ...privateNetwork });
    return response.end();
  }
  const url = new URL(request.url ?? '/', 'http://device');
  if (url.pathname !== '/execute') return answer(response, 404, 'Not found: POST the signed operation to /execute');
  if (request.method !== 'POST') return answer(response, 405, 'Use POST');
  const address = request.socket.remoteAddress ?? '';
  const wait = limiter.blockedFor(address);
  if (wait > 0) {
    response.setHeader('retry-after', String(wait));
    return answer(response, 429, deviceRefusals.tooManyRefusals);
  }
  const jws = await readOperation(request);
  if (jws === null) {
    limiter.refused(address);
    return answer(response, 400, operationErrors.malformed);
  }
  const result = await controller.handle(jws);
  const status = result.outcome === 'DONE' ? 204 : isMalformed(result.reasonKey) ? 400 : 403;
  if (status !== 204) limiter.refused(address);
  // What was not an operation is not reported; a decision, either way, is.
  if (status !== 400) onOutcome?.(result, jws);
  if (status === 204) {
    response.writeHead(204);
    return response.end();
  }
  answer(response, status, result.reason!);
}

/** The body as a JWS: plain text, or a JSON string; null when it is neither or too long. */
async function readOperation(request: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    length += chunk.length;
    if (length > MAX_OPERATION_LENGTH + 16) return null;
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (!(request.headers['content-type'] ?? '').includes('json')) return text || null;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'string' && value ? value : null;
  } catch {
    return null;
  }
}

function answer(response: ServerResponse, code: number, message: string) {
  response.writeHead(code, { 'content-type': 'application/json' });
  response.end(JSON.stringify({ code, message }));
}

/**
 * The URLs a phone on the LAN reaches the local endpoint at: the address it listens on, or, listening on
 * every address, one per non-internal IPv4 address of this machine. A loopback-only endpoint is announced
 * nowhere.
 */
export function localEndpoints(port: number, host = '0.0.0.0'): string[] {
  if (host !== '0.0.0.0' && host !== '::') return isIPv4(host) && !host.startsWith('127.') ? [`http://${host}:${port}/execute`] : [];
  return Object.values(networkInterfaces())
    .flat()
    .filter((address) => address && address.family === 'IPv4' && !address.internal)
    .slice(0, MAX_DIRECT_ACCESS_ENDPOINTS)
    .map((address) => `http://${address!.address}:${port}/execute`);
}
