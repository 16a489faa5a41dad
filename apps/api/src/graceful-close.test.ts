import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, eventually, uniqueEmail, type TestApp } from '../test/helpers.js';
import { users } from './db/schema.js';

let t: TestApp;
let closing: Promise<void> | undefined;
beforeAll(async () => {
  t = await createTestApp();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await (closing ?? t.close());
});

/** One POST over a kept-alive connection, the way browsers and HTTP clients send them. */
function post(port: number, agent: http.Agent, path: string, body: object): Promise<{ status: number; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe('graceful close', () => {
  it('a write still in flight when close() starts is answered with Connection: close, so close() does not wait on its socket', async () => {
    const { port } = t.app.server.address() as AddressInfo;
    const agent = new http.Agent({ keepAlive: true });
    // Hold the write in its read-your-writes wait (onSend) until close() has begun. The cache's heartbeat
    // syncs too, every few seconds: only a sync once the account is written is held, so close() never
    // starts before the write has reached the server.
    const email = uniqueEmail('drain');
    const written = async () => (await t.app.db.select({ id: users.id }).from(users).where(eq(users.email, email))).length > 0;
    const cache = t.app.accessCache;
    const realSync = cache.sync.bind(cache);
    let entered!: () => void;
    const inSync = new Promise<void>((r) => (entered = r));
    let holding = true;
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const release = () => ((holding = false), open());
    cache.sync = async () => {
      if (holding && (await written().catch(() => false))) {
        entered();
        await gate;
      }
      return realSync();
    };

    const answer = post(port, agent, '/api/auth/register', { email, password: 'drain-pass' });
    await inSync;
    closing = t.close();
    // close() is under way once the server has stopped listening (after the preClose hooks).
    expect(await eventually(() => !t.app.server.listening)).toBe(true);
    release();

    const res = await answer;
    // With the socket kept alive, server.close() would wait for the client (keep-alive: 72 s). Well under
    // that, the cap leaves a busy host the time to close the app and its database.
    const outcome = await Promise.race([closing.then(() => 'closed'), new Promise((r) => setTimeout(() => r('still open after 30 s'), 30_000).unref())]);
    agent.destroy(); // lets a failing run close
    expect(res.status).toBe(200);
    expect(res.connection).toBe('close');
    expect(outcome).toBe('closed');
  });
});
