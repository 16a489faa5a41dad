import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { asc, eq, inArray } from 'drizzle-orm';
import type { SQL } from 'drizzle-orm';
import { deviceTopic, type Lock } from '@latchkey/contract';
import { lockDevices, webhookDeliveries, webhooks } from '../../../db/schema.js';
import { createTestApp, type TestApp } from '../../../../test/helpers.js';
import { connectMqtt, deviceTls, provisionDevice, type ProvisionedDevice } from '../../../../test/fixtures/devices.js';
import { createLock, createSandbox, type Sandbox } from '../../../../test/fixtures/operations.js';

/**
 * Many devices reporting their presence at once (a fleet back after a restart), through the embedded broker
 * over mutual TLS: the reports that arrive together are recorded together, and each device is still
 * announced to webhooks and to its lock's live view on its own, in the order of its reports, once each.
 */
const DEVICES = 12;
let t: TestApp;
let port: number;
let sandbox: Sandbox;

beforeAll(async () => {
  t = await createTestApp({ MQTT_PORT: '0' });
  port = (await t.app.mqtt.listen())!;
  sandbox = await createSandbox(t);
  await t.database.db.insert(webhooks).values({ applicationId: sandbox.applicationId, url: 'https://hooks.example.com/latchkey', events: ['device.online', 'device.offline'], secret: 'whsec_dGVzdA==' });
});
afterAll(() => t?.close());

const sqlText = (query: unknown) => (t.database.db as unknown as { dialect: { sqlToQuery(q: SQL): { sql: string } } }).dialect.sqlToQuery(query as SQL).sql;

describe('presence reported by many devices at once', () => {
  it('is recorded in fewer statements than devices; each device announced once per change, in order, and its live view told each change', async () => {
    const devices: ProvisionedDevice[] = [];
    for (let i = 0; i < DEVICES; i++) devices.push(await provisionDevice(t, sandbox.owner.token, sandbox.applicationId, await createLock(t, sandbox.applicationId)));
    const clients = await Promise.all(devices.map((device) => connectMqtt(port, { ...deviceTls(device), clientId: device.deviceId })));
    const lockOf = new Map(devices.map((device) => [device.lockId, device.deviceId]));
    /** Per device: the presence its lock's live view was told, in order. */
    const live = new Map<string, boolean[]>(devices.map((device) => [device.deviceId, []]));
    const stop = t.app.liveEvents.subscribe(sandbox.applicationId, (event) => {
      if (event.event !== 'lock') return;
      const lock = JSON.parse(event.data) as Lock;
      const deviceId = lockOf.get(lock.id);
      const seen = deviceId ? live.get(deviceId)! : undefined;
      if (seen && lock.device && seen.at(-1) !== lock.device.connected) seen.push(lock.device.connected);
    });
    const say = async (presence: 'online' | 'offline') => {
      await Promise.all(clients.map((client, i) => client.publishAsync(deviceTopic(devices[i]!.deviceId, 'presence'), presence, { qos: 1, retain: true })));
      await t.app.deviceRuntime.settled();
    };
    try {
      const transactions = vi.spyOn(t.database.db, 'transaction');
      const statements = vi.spyOn(t.database.db, 'execute');
      await say('online');
      const presenceWrites = statements.mock.calls.filter(([query]) => sqlText(query).includes('presence_changed_at')).length + transactions.mock.calls.length;
      transactions.mockRestore();
      statements.mockRestore();
      expect(presenceWrites).toBeGreaterThan(0);
      expect(presenceWrites).toBeLessThan(DEVICES);
      const rows = await t.database.db.select().from(lockDevices).where(inArray(lockDevices.id, devices.map((device) => device.deviceId)));
      expect(rows.map((row) => row.connected)).toEqual(devices.map(() => true));

      // Offline soon after: announced once the presence has held.
      await say('offline');
      await t.app.deviceRuntime.announced();
      const deliveries = await t.database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.applicationId, sandbox.applicationId)).orderBy(asc(webhookDeliveries.createdAt));
      for (const device of devices) {
        const announced = deliveries.filter((delivery) => (delivery.payload as { data: { deviceId: string } }).data.deviceId === device.deviceId);
        expect(announced.map((delivery) => delivery.eventType), device.deviceId).toEqual(['device.online', 'device.offline']);
        expect(announced[0]!.payload).toMatchObject({ type: 'device.online', data: { applicationId: sandbox.applicationId, lockId: device.lockId, lockName: 'Front Door', deviceId: device.deviceId } });
      }
      await vi.waitFor(() => expect([...live.values()]).toEqual(devices.map(() => [true, false])), { timeout: 10_000 });
    } finally {
      stop();
      await Promise.all(clients.map((client) => client.endAsync()));
    }
  });
});
