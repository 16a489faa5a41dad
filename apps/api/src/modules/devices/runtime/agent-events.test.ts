import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { and, eq, sql } from 'drizzle-orm';
import { DeviceAgent, StateDir, VirtualActuator, saveProvisioning, type Logger } from '@latchkey/device';
import { WEBHOOK_EVENTS, type AccessCode, type Lock } from '@latchkey/contract';
import { webhookDeliveries, webhooks } from '../../../db/schema.js';
import { createTestApp, eventually, type TestApp } from '../../../../test/helpers.js';
import { provisionDevice, type ProvisionedDevice } from '../../../../test/fixtures/devices.js';
import { bearer } from '../../../../test/fixtures/platform-users.js';
import { createLock, createSandbox, logOf, type Sandbox } from '../../../../test/fixtures/operations.js';

/**
 * Events from a real door: the device package's DeviceAgent, over mutual TLS to the embedded broker, signs
 * and chains what its keypad and sensors report; the platform logs each once, with the door's own time,
 * and announces it. Offline, the agent keeps them on disk and delivers them, in order, once it connects.
 */
let t: TestApp;
let sandbox: Sandbox;
let port: number;
let lockId: string;
let device: ProvisionedDevice;
let state: StateDir;
const agents: DeviceAgent[] = [];
const dirs: string[] = [];
const quiet: Logger = { info: () => undefined, warn: () => undefined };

beforeAll(async () => {
  t = await createTestApp({ MQTT_PORT: '0' });
  port = (await t.app.mqtt.listen())!;
  sandbox = await createSandbox(t);
  await t.database.db.insert(webhooks).values({ applicationId: sandbox.applicationId, url: 'https://hooks.example.com/latchkey', events: [...WEBHOOK_EVENTS], secret: 'whsec_dGVzdA==' });
});
afterAll(async () => {
  await t?.close();
  for (const each of dirs) fs.rmSync(each, { recursive: true, force: true });
});
beforeEach(async () => {
  lockId = await createLock(t, sandbox.applicationId, { unlockTime: 1 });
  device = await provisionDevice(t, sandbox.owner.token, sandbox.applicationId, lockId);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-agent-events-'));
  dirs.push(dir);
  state = new StateDir(dir);
});
afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.stop();
});

/** Starts the door's agent against `mqttUrl` (the platform's broker unless told). */
async function startAgent(mqttUrl = `mqtts://127.0.0.1:${port}`): Promise<DeviceAgent> {
  await saveProvisioning(state, { ...device, mqttUrl }, device.key.privateKeyPem, 'http://127.0.0.1');
  return run();
}
async function run(): Promise<DeviceAgent> {
  const agent = await DeviceAgent.start({ state, actuator: new VirtualActuator(), firmware: 'events-test', log: quiet, reconnectMs: 50, maxReconnectMs: 200 });
  agents.push(agent);
  return agent;
}
/** The same door, now given the platform's broker (its chain and undelivered events kept). */
async function reconnectAgent(): Promise<DeviceAgent> {
  const identity = (await state.readIdentity())!;
  await state.write('identity', `${JSON.stringify({ ...identity, mqttUrl: `mqtts://127.0.0.1:${port}` }, null, 2)}\n`);
  return run();
}
const log = () => logOf(t, sandbox, lockId);
const ownerLock = async () => (await t.app.inject({ method: 'GET', url: `/api/platform/application/${sandbox.applicationId}/lock/${lockId}`, headers: bearer(sandbox.owner.token) })).json() as Lock;
const deliveries = async (type: string) =>
  (
    await t.database.db
      .select()
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.applicationId, sandbox.applicationId), eq(webhookDeliveries.eventType, type), sql`${webhookDeliveries.payload}->'data'->>'lockId' = ${lockId}`))
  ).map((row) => (row.payload as { data: Record<string, unknown> }).data);
/** Waits until the log holds `n` entries the device reported, and answers them, oldest first. */
async function entries(n: number) {
  const fromDevice = async () => (await log()).filter((e) => e.source === 'device').reverse();
  expect(await eventually(async () => (await fromDevice()).length >= n)).toBe(true);
  await t.app.deviceRuntime.settled();
  return fromDevice();
}

/** A port nothing listens on: an agent pointed there is a door without the platform. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: free } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return free;
}

describe('a door’s events', () => {
  it('a keypad code and the door sensor: logged from the device with the code, the door shown, the webhooks owed', async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: `/api/platform/application/${sandbox.applicationId}/lock/${lockId}/access-code`,
      headers: bearer(sandbox.owner.token),
      payload: { name: 'Cleaner', code: '246810' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const code = created.json() as AccessCode;
    const agent = await startAgent();
    expect(await eventually(() => (agent.controller.config?.accessCodes ?? []).some((c) => c.accessCodeId === code.accessCodeId))).toBe(true);

    expect((await agent.enterCode('246810')).outcome).toBe('DONE');
    expect(agent.reportSensor({ type: 'door_opened' })).toBe(true);
    expect((await agent.enterCode('999999')).outcome).toBe('REFUSED');
    const logged = await entries(3);
    expect(logged.map((e) => [e.type, e.method, e.accessCodeId, e.rejected])).toEqual([
      ['UNLOCK', 'access_code', code.accessCodeId, false],
      ['DOOR_OPENED', null, null, false],
      ['UNLOCK', 'access_code', null, true],
    ]);
    expect(logged[0]!.subject).toBe('Cleaner');
    expect((await ownerLock()).door).toBe('open');
    expect(await deliveries('lock.unlocked')).toEqual([expect.objectContaining({ method: 'access_code', accessCodeId: code.accessCodeId, source: 'device', deviceId: device.deviceId })]);
    expect(await deliveries('lock.door_opened')).toHaveLength(1);
    expect(await deliveries('lock.unlock_refused')).toEqual([expect.objectContaining({ method: 'access_code', source: 'device' })]);
  });

  it('decided without the platform: kept by the door, delivered once it connects, logged in order with their own times and marked offline', async () => {
    const away = await startAgent(`mqtts://127.0.0.1:${await closedPort()}`);
    expect(away.reportSensor({ type: 'door_opened' })).toBe(true);
    expect(away.reportSensor({ type: 'battery', value: 12 })).toBe(true);
    expect(away.reportSensor({ type: 'door_closed' })).toBe(true);
    // The agent has them on disk (signed and chained) before it is stopped.
    await away.stop();
    agents.splice(agents.indexOf(away), 1);
    const before = Date.now();
    await reconnectAgent();
    const logged = await entries(3);
    expect(logged.map((e) => [e.type, e.offline, e.source])).toEqual([
      ['DOOR_OPENED', true, 'device'],
      ['BATTERY', true, 'device'],
      ['DOOR_CLOSED', true, 'device'],
    ]);
    for (const entry of logged) expect(entry.timestamp * 1000).toBeLessThan(before);
    expect(logged.map((e) => e.timestamp)).toEqual([...logged.map((e) => e.timestamp)].sort((a, b) => a - b));
    expect(await ownerLock()).toMatchObject({ door: 'closed', battery: 12, alarms: ['low_battery'] });
    expect(await deliveries('device.low_battery')).toEqual([expect.objectContaining({ battery: 12, offline: true })]);
  });
});
