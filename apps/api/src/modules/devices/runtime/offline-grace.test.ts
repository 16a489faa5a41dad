import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import type { MqttClient } from 'mqtt';
import {
  DEFAULT_OFFLINE_GRACE_S,
  MAX_OFFLINE_GRACE_S,
  MIN_OFFLINE_GRACE_S,
  deviceTopic,
  lockMessages,
  type DeviceConfig,
  type Lock,
} from '@latchkey/contract';
import { lockDevices, locks } from '../../../db/schema.js';
import { createTestApp, type TestApp } from '../../../../test/helpers.js';
import { connectMqtt, deviceTls, provisionDevice, type ProvisionedDevice } from '../../../../test/fixtures/devices.js';
import { bearer } from '../../../../test/fixtures/platform-users.js';
import { createLock, createSandbox, logOf, type Sandbox } from '../../../../test/fixtures/operations.js';
import { ConfigReissuer, REISSUE_MAX_INTERVAL_S, REISSUES_PER_TICK, RETRY_S, dueAt, reissueInterval } from './config-reissue.js';

/**
 * A lock's offline grace: set through the owner's lock update (60 s – 30 days), shown on the lock, carried in
 * every config with the time it was issued, and each connected device's config issued again before it lapses.
 */
let t: TestApp;
let sandbox: Sandbox;
let port: number;

beforeAll(async () => {
  t = await createTestApp({ MQTT_PORT: '0' });
  port = (await t.app.mqtt.listen())!;
  sandbox = await createSandbox(t);
});
afterAll(() => t?.close());

const lockUrl = (lockId: string) => `/api/platform/application/${sandbox.applicationId}/lock/${lockId}`;
const put = (lockId: string, payload: object) => t.app.inject({ method: 'PUT', url: lockUrl(lockId), headers: bearer(sandbox.owner.token), payload });
const get = async (lockId: string) => (await t.app.inject({ method: 'GET', url: lockUrl(lockId), headers: bearer(sandbox.owner.token) })).json() as Lock;
const nowS = () => Math.floor(Date.now() / 1000);

describe('the offline grace in the lock settings', () => {
  it(`is ${DEFAULT_OFFLINE_GRACE_S} s by default, shown on the lock and in the list`, async () => {
    const lockId = await createLock(t, sandbox.applicationId);
    expect((await get(lockId)).offlineGraceSeconds).toBe(DEFAULT_OFFLINE_GRACE_S);
    const list = (await t.app.inject({ method: 'GET', url: `/api/platform/application/${sandbox.applicationId}/lock`, headers: bearer(sandbox.owner.token) })).json() as Lock[];
    expect(list.find((l) => l.id === lockId)!.offlineGraceSeconds).toBe(DEFAULT_OFFLINE_GRACE_S);
  });

  it('takes any whole number of seconds from 1 minute to 30 days, and logs the change as a settings change', async () => {
    const lockId = await createLock(t, sandbox.applicationId);
    for (const grace of [MIN_OFFLINE_GRACE_S, 3600, MAX_OFFLINE_GRACE_S]) {
      const res = await put(lockId, { offlineGraceSeconds: grace });
      expect(res.statusCode, res.body).toBe(200);
      expect((res.json() as Lock).offlineGraceSeconds).toBe(grace);
      expect((await get(lockId)).offlineGraceSeconds).toBe(grace);
    }
    expect((await logOf(t, sandbox, lockId))[0]).toMatchObject({ type: 'SETTINGS', subject: 'offlineGraceSeconds' });
  });

  it('answers 400 with the range outside it, or for a fraction or a string, and stores nothing', async () => {
    const lockId = await createLock(t, sandbox.applicationId);
    await put(lockId, { offlineGraceSeconds: 3600 });
    for (const grace of [MIN_OFFLINE_GRACE_S - 1, MAX_OFFLINE_GRACE_S + 1, 0, -60, 90.5, '3600', null]) {
      const res = await put(lockId, { name: 'Renamed', offlineGraceSeconds: grace });
      expect(res.statusCode, String(grace)).toBe(400);
      expect(res.body).toContain(lockMessages.offlineGraceRange);
    }
    const [row] = await t.database.db.select().from(locks).where(eq(locks.id, lockId));
    expect(row).toMatchObject({ offlineGraceSeconds: 3600, name: expect.not.stringMatching('Renamed') });
  });
});

describe('a connected device’s config', () => {
  let lockId: string;
  let device: ProvisionedDevice;
  let client: MqttClient;
  let configs: DeviceConfig[];
  let waiters: (() => void)[];

  /** The next config the device receives that `match` accepts. */
  let setUpAt: number;
  const nextConfig = async (match: (config: DeviceConfig) => boolean): Promise<DeviceConfig> => {
    for (;;) {
      const found = configs.find(match);
      if (found) return found;
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };

  beforeEach(async () => {
    setUpAt = nowS();
    lockId = await createLock(t, sandbox.applicationId);
    device = await provisionDevice(t, sandbox.owner.token, sandbox.applicationId, lockId);
    client = await connectMqtt(port, { ...deviceTls(device), clientId: device.deviceId });
    configs = [];
    waiters = [];
    client.on('message', (_topic, payload) => {
      configs.push(JSON.parse(Buffer.from(payload.toString().split('.')[1]!, 'base64url').toString()) as DeviceConfig);
      for (const wake of waiters.splice(0)) wake();
    });
    await client.subscribeAsync(deviceTopic(device.deviceId, 'config'), { qos: 1 });
    await client.publishAsync(deviceTopic(device.deviceId, 'presence'), 'online', { qos: 1, retain: true });
    await t.app.deviceRuntime.settled();
  });
  afterEach(async () => {
    client?.end(true);
    await t.app.deviceRuntime.settled();
  });

  it('carries when it was issued and the lock’s grace', async () => {
    // The first config may go out while the device is set up, so it was issued no earlier than that.
    const first = await nextConfig(() => true);
    expect(first.offlineGraceSeconds).toBe(DEFAULT_OFFLINE_GRACE_S);
    expect(first.issuedAt).toBeGreaterThanOrEqual(setUpAt);
    expect(first.issuedAt).toBeLessThanOrEqual(nowS());
  });

  it('is published again at once when the grace changes', async () => {
    const first = await nextConfig(() => true);
    expect((await put(lockId, { offlineGraceSeconds: 3600 })).statusCode).toBe(200);
    const changed = await nextConfig((c) => c.offlineGraceSeconds === 3600);
    expect(changed.version).toBeGreaterThan(first.version);
  });

  it('falling due as its device comes online is issued by the coming online only, and by the timer only after the retry time', async () => {
    const first = await nextConfig(() => true);
    let clock = first.issuedAt! + reissueInterval(DEFAULT_OFFLINE_GRACE_S);
    // Other tests' locks fall due at this clock too: only this lock's re-issues count.
    const reissued: string[] = [];
    const reissue = (id: string) => void (id === lockId && reissued.push(id));
    const reissuer = new ConfigReissuer({ db: t.database.db, bus: t.app.deviceBus, reissue, log: t.app.log, clock: () => clock });
    await reissuer.start();
    try {
      expect(reissuer.freshOrTaken(lockId)).toBe(false);
      await reissuer.tick();
      expect(reissued).toEqual([]);
      // The config the coming online asked for never arrived (a failed publish): the timer tries again.
      clock += RETRY_S;
      await reissuer.tick();
      expect(reissued).toEqual([lockId]);
    } finally {
      reissuer.stop();
    }
  });

  it('is issued again, with a new issuedAt and version, once it is due, and only to a connected device', async () => {
    const first = await nextConfig(() => true);
    let clock = nowS();
    const reissuer = new ConfigReissuer({
      db: t.database.db,
      bus: t.app.deviceBus,
      reissue: (id) => t.app.deviceRuntime.configs.reissue(id),
      log: t.app.log,
      clock: () => clock,
    });
    await reissuer.start();
    try {
      expect(reissuer.fresh(lockId)).toBe(true);
      await reissuer.tick();
      expect(configs).toHaveLength(1);
      clock = first.issuedAt! + reissueInterval(DEFAULT_OFFLINE_GRACE_S);
      expect(reissuer.fresh(lockId)).toBe(false);
      await reissuer.tick();
      const again = await nextConfig((c) => c.version > first.version);
      expect(again.issuedAt).toBeGreaterThanOrEqual(first.issuedAt!);
      expect(again.users).toEqual(first.users);
      clock = again.issuedAt!;
      await t.app.deviceRuntime.settled();
      expect(reissuer.fresh(lockId)).toBe(true);

      // Not connected: nothing is sent, and the lock is forgotten until its device comes online.
      await t.database.db.update(lockDevices).set({ connected: false }).where(eq(lockDevices.id, device.deviceId));
      clock = again.issuedAt! + reissueInterval(DEFAULT_OFFLINE_GRACE_S);
      await reissuer.tick();
      await t.app.deviceRuntime.settled();
      expect(configs.filter((c) => c.version > again.version)).toEqual([]);
      expect(reissuer.fresh(lockId)).toBe(false);
    } finally {
      reissuer.stop();
    }
  });

  it('is issued afresh when its device comes online holding one that is due', async () => {
    const first = await nextConfig(() => true);
    t.app.deviceRuntime.reissuer.heard(deviceTopic(device.deviceId, 'config'), Buffer.from(`e30.${Buffer.from(JSON.stringify({ lockId, issuedAt: first.issuedAt! - DEFAULT_OFFLINE_GRACE_S })).toString('base64url')}.x`));
    await client.publishAsync(deviceTopic(device.deviceId, 'presence'), 'offline', { qos: 1, retain: true });
    await t.app.deviceRuntime.settled();
    await client.publishAsync(deviceTopic(device.deviceId, 'presence'), 'online', { qos: 1, retain: true });
    const fresh = await nextConfig((c) => c.version > first.version);
    expect(fresh.issuedAt).toBeGreaterThanOrEqual(first.issuedAt!);
  });
});

describe('the re-issue schedule', () => {
  it(`falls at half the grace, at most every ${REISSUE_MAX_INTERVAL_S} s, up to a quarter of that early`, () => {
    expect(reissueInterval(60)).toBe(30);
    expect(reissueInterval(3600)).toBe(1800);
    expect(reissueInterval(DEFAULT_OFFLINE_GRACE_S)).toBe(REISSUE_MAX_INTERVAL_S);
    expect(dueAt(1000, 60, 0)).toBe(1030);
    expect(dueAt(1000, 60, 0.999)).toBe(1030 - 7);
  });

  it('spreads 10,000 configs issued in the same second over a quarter of their interval, and re-signs at most a tick’s worth at a time', async () => {
    const issuedAt = nowS() - REISSUE_MAX_INTERVAL_S;
    const calls: string[] = [];
    const reissuer = new ConfigReissuer({ db: t.database.db, bus: t.app.deviceBus, reissue: (id) => calls.push(id), log: t.app.log, clock: () => issuedAt });
    const lockIds = Array.from({ length: 10_000 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    for (const id of lockIds) reissuer.heard(deviceTopic(id, 'config'), Buffer.from(`e30.${Buffer.from(JSON.stringify({ lockId: id, issuedAt, offlineGraceSeconds: DEFAULT_OFFLINE_GRACE_S })).toString('base64url')}.x`));
    const dues = lockIds.map((id) => reissuer.dueOf(id)! - issuedAt);
    const spread = REISSUE_MAX_INTERVAL_S / 4;
    expect(Math.min(...dues)).toBeGreaterThanOrEqual(REISSUE_MAX_INTERVAL_S - spread);
    expect(Math.max(...dues)).toBeLessThanOrEqual(REISSUE_MAX_INTERVAL_S);
    // No minute of the spread holds more than a few times its share.
    const perMinute = new Map<number, number>();
    for (const due of dues) perMinute.set(Math.floor(due / 60), (perMinute.get(Math.floor(due / 60)) ?? 0) + 1);
    expect(perMinute.size).toBeGreaterThanOrEqual(spread / 60);
    expect(Math.max(...perMinute.values())).toBeLessThan((10_000 / (spread / 60)) * 3);

    // All due at once (the clock jumped): one tick takes REISSUES_PER_TICK, none of them connected here.
    (reissuer as unknown as { clock: () => number }).clock = () => issuedAt + 2 * REISSUE_MAX_INTERVAL_S;
    await reissuer.tick();
    expect(reissuer.size).toEqual({ known: 10_000 - REISSUES_PER_TICK, queued: 10_000 - REISSUES_PER_TICK });
    expect(calls).toEqual([]);
  });
});
