import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { asc, eq } from 'drizzle-orm';
import { DEVICE_REPORT_BURST, deviceTopic } from '@latchkey/contract';
import { lockDevices, webhookDeliveries, webhooks } from '../../../db/schema.js';
import { createTestApp, eventually, type TestApp } from '../../../../test/helpers.js';
import { connectMqtt, deviceTls, provisionDevice, type ProvisionedDevice } from '../../../../test/fixtures/devices.js';
import { createLock, createSandbox, type Sandbox } from '../../../../test/fixtures/operations.js';

/** A device that floods the service with reports, through the embedded broker over mutual TLS. */
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

const newDevice = async (): Promise<ProvisionedDevice> => provisionDevice(t, sandbox.owner.token, sandbox.applicationId, await createLock(t, sandbox.applicationId));
const rowOf = async (deviceId: string) => (await t.database.db.select().from(lockDevices).where(eq(lockDevices.id, deviceId)))[0]!;
const announcements = async (deviceId: string) =>
  (await t.database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.applicationId, sandbox.applicationId)).orderBy(asc(webhookDeliveries.createdAt)))
    .filter((delivery) => (delivery.payload as { data: { deviceId: string } }).data.deviceId === deviceId)
    .map((delivery) => delivery.eventType);

describe('a device that floods the service', () => {
  it('flapping its presence 300 times gives two webhooks: online at once, offline once it has held', async () => {
    const device = await newDevice();
    const client = await connectMqtt(port, deviceTls(device));
    for (let i = 0; i < 300; i++) await client.publishAsync(deviceTopic(device.deviceId, 'presence'), i % 2 === 0 ? 'online' : 'offline', { qos: 1, retain: true });
    // The last report is recorded (perhaps once the rate allows), and then announced once it has held.
    expect(await eventually(async () => !(await rowOf(device.deviceId)).connected, 10_000)).toBe(true);
    await t.app.deviceRuntime.announced();
    expect(await announcements(device.deviceId)).toEqual(['device.online', 'device.offline']);
    expect((await rowOf(device.deviceId)).presenceAnnounced).toBe(false);
    await client.endAsync();
  });

  it('records at most DEVICE_REPORT_BURST reports at once, then the latest when the rate allows', async () => {
    const device = await newDevice();
    const client = await connectMqtt(port, deviceTls(device));
    const clock = vi.spyOn(t.app.deviceRuntime.reportLimiter, 'clock').mockReturnValue(Date.now());
    try {
      for (let i = 1; i <= 60; i++) {
        const state = { locked: i % 2 === 0, firmware: `fw ${i}`, at: new Date().toISOString() };
        await client.publishAsync(deviceTopic(device.deviceId, 'state'), JSON.stringify(state), { qos: 1 });
      }
      await t.app.deviceRuntime.settled();
      // With the clock held still no token comes back: the reports after the burst wait.
      expect((await rowOf(device.deviceId)).firmware).toBe(`fw ${DEVICE_REPORT_BURST}`);
    } finally {
      clock.mockRestore();
    }
    expect(await eventually(async () => (await rowOf(device.deviceId)).firmware === 'fw 60', 10_000)).toBe(true);
    expect((await rowOf(device.deviceId)).state?.locked).toBe(true);
    await client.endAsync();
  });
});
