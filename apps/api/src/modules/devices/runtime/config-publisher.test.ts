import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { eq } from 'drizzle-orm';
import type { DeviceConfig } from '@latchkey/contract';
import { lockDevices, locks } from '../../../db/schema.js';
import { SecretBox } from '../../../lib/secret-box.js';
import type { DeviceBus } from '../../../plugins/mqtt/bus.js';
import { createTestApp, type TestApp } from '../../../../test/helpers.js';
import { createLock, createSandbox, type Sandbox } from '../../../../test/fixtures/operations.js';
import { ConfigPublisher, PUBLISHES_AT_ONCE } from './config-publisher.js';

/**
 * Configs are read before they wait for a turn to be issued. A change that comes while one waits (its
 * notice) is issued in its place by the run after it: the device is sent the config as it is now, once,
 * not the one read before the change and then another.
 */
let t: TestApp;
let sandbox: Sandbox;

beforeAll(async () => {
  t = await createTestApp();
  sandbox = await createSandbox(t);
  // The service's own publisher stays out of it: only the one under test issues these locks' configs.
  t.app.deviceRuntime.configs.stop();
});
afterAll(() => t?.close());

const readConfig = (payload: string | Buffer) => JSON.parse(Buffer.from(payload.toString().split('.')[1]!, 'base64url').toString()) as DeviceConfig;

async function lockWithDevice(unlockTime = 5): Promise<string> {
  const lockId = await createLock(t, sandbox.applicationId, { unlockTime });
  await t.database.db.insert(lockDevices).values({ lockId, provisionedAt: new Date() });
  return lockId;
}

describe('a config waiting for its turn to be issued', () => {
  it('is issued once, as the lock is after a change noticed meanwhile', async () => {
    const published: DeviceConfig[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    // Every config published waits for `held`: the first PUBLISHES_AT_ONCE take every turn.
    const bus = {
      publish: async (_topic: string, payload: string | Buffer) => {
        published.push(readConfig(payload));
        await held;
      },
    } as unknown as DeviceBus;
    const publisher = new ConfigPublisher(t.database.db, bus, t.app.platformCa, t.app.log, new SecretBox(undefined));
    const busy = await Promise.all(Array.from({ length: PUBLISHES_AT_ONCE }, () => lockWithDevice()));
    const waiting = await lockWithDevice(7);
    try {
      for (const lockId of busy) publisher.reissue(lockId);
      await vi.waitFor(() => expect(published).toHaveLength(PUBLISHES_AT_ONCE), { timeout: 30_000 });
      publisher.reissue(waiting);
      // Read, it waits for a turn.
      await vi.waitFor(() => expect((publisher as unknown as { turns: unknown[] }).turns).toHaveLength(1), { timeout: 30_000 });
      await t.database.db.update(locks).set({ unlockTime: 9 }).where(eq(locks.id, waiting));
      publisher.onNotice(`${sandbox.applicationId} ${waiting} lock`);
      release();
      await publisher.idle();
      expect(published.filter((config) => config.lockId === waiting).map((config) => [config.version, config.unlockTime])).toEqual([[1, 9]]);
      expect(published.filter((config) => busy.includes(config.lockId))).toHaveLength(PUBLISHES_AT_ONCE);
    } finally {
      release();
      publisher.stop();
    }
  });
});
