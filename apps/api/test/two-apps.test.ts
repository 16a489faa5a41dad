import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { eq } from 'drizzle-orm';
import { outboundErrors } from '@latchkey/contract';
import { usedOperationIds } from '../src/db/schema.js';
import { createTestApp, type TestApp } from './helpers.js';
import { bearer, createApplication, createOwner } from './fixtures/platform-users.js';
import { appUserToken, certify, createLock, createSandbox, execute, share, signOperation } from './fixtures/operations.js';

/**
 * Two apps in one process keep their own state: each has its own outbound guard (OUTBOUND_ALLOW), issuer
 * caches, application reads, request ids and purge of spent operation ids, so the second app built does not change what the first one does.
 */
let allowing: TestApp;
let strict: TestApp;

beforeAll(async () => {
  allowing = await createTestApp({ OUTBOUND_ALLOW: '127.0.0.1' });
  strict = await createTestApp({});
});

afterAll(async () => {
  await allowing?.close();
  await strict?.close();
});

async function registerWebhook(t: TestApp, url: string) {
  const owner = await createOwner(t);
  const applicationId = await createApplication(t, owner.userId);
  return t.app.inject({
    method: 'POST',
    url: `/api/platform/application/${applicationId}/webhook`,
    headers: bearer(owner.token),
    payload: { url, events: ['lock.unlocked'] },
  });
}

describe('two apps in one process', () => {
  it('each keeps its own OUTBOUND_ALLOW, whichever was built last', async () => {
    const url = 'http://127.0.0.1:9/hook';
    expect((await registerWebhook(allowing, url)).statusCode).toBe(201);
    const refused = await registerWebhook(strict, url);
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toContain(outboundErrors.notHttps);
  });

  it('each has its own issuer caches and application reads', () => {
    expect(allowing.app.outbound).not.toBe(strict.app.outbound);
    expect(allowing.app.issuers).not.toBe(strict.app.issuers);
    expect(allowing.app.applicationReads).not.toBe(strict.app.applicationReads);
  });

  it("each numbers its own request ids: the other app's requests neither advance its count nor share its prefix", async () => {
    const requestId = async (t: TestApp) => (await t.app.inject({ method: 'GET', url: '/api/health' })).headers['x-request-id'];
    const first = String(await requestId(allowing));
    const other = String(await requestId(strict));
    const second = String(await requestId(allowing));
    const prefix = first.slice(0, 18);
    expect(second).toBe(`${prefix}${(parseInt(first.slice(18), 36) + 1).toString(36)}`);
    expect(other.slice(0, 18)).not.toBe(prefix);
  });

  it("each purges its own expired spent operation ids: the other app's purge does not hold it back", async () => {
    const unlock = async (t: TestApp) => {
      const sandbox = await createSandbox(t);
      const lockId = await createLock(t, sandbox.applicationId);
      const holder = await certify(t, await appUserToken(sandbox, 'alice'));
      await share(t, lockId, holder.userId);
      const res = await execute(t, lockId, holder.token, signOperation(holder, lockId, { type: 'MUTATE_LOCK', locked: false }));
      expect(res.statusCode, res.body).toBe(204);
    };
    const expired = `expired-${Date.now()}`;
    await strict.database.db.insert(usedOperationIds).values({ id: expired, expiresAt: new Date(Date.now() - 60_000) });
    await unlock(allowing);
    await unlock(strict);
    await vi.waitFor(async () => {
      expect(await strict.database.db.select().from(usedOperationIds).where(eq(usedOperationIds.id, expired))).toEqual([]);
    }, { timeout: 10_000 });
  });
});
