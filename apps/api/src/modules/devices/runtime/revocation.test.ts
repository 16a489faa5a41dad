import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DeviceAgent, StateDir, VirtualActuator, saveProvisioning, type Logger } from '@latchkey/device';
import { createTestApp, eventually, type TestApp } from '../../../../test/helpers.js';
import { provisionDevice } from '../../../../test/fixtures/devices.js';
import { bearer } from '../../../../test/fixtures/platform-users.js';
import { appUserToken, certify, createLock, createSandbox, share, signOperation, type KeyHolder, type Sandbox } from '../../../../test/fixtures/operations.js';

/**
 * Revocation reaches a connected door at once: after the owner's 204, the door (the device package's
 * DeviceAgent, over mutual TLS to the embedded broker) refuses the revoked user's next signed operation —
 * handed to it at its local endpoint, where the platform cannot refuse it first — with no reconnect.
 */
let t: TestApp;
let sandbox: Sandbox;
let port: number;
let lockId: string;
let alice: KeyHolder;
let agent: DeviceAgent;
/** The agents' state directories, removed once the service is closed: an agent may still be writing the last config it took as it stops. */
const dirs: string[] = [];
let reconnects: number;
const UNLOCK = { type: 'MUTATE_LOCK', locked: false };
const quiet: Logger = { info: () => undefined, warn: () => undefined };

beforeAll(async () => {
  t = await createTestApp({ MQTT_PORT: '0' });
  port = (await t.app.mqtt.listen())!;
  sandbox = await createSandbox(t);
});
afterAll(async () => {
  await t?.close();
  for (const each of dirs) fs.rmSync(each, { recursive: true, force: true });
});

beforeEach(async () => {
  lockId = await createLock(t, sandbox.applicationId, { unlockTime: 1 });
  alice = await certify(t, await appUserToken(sandbox, `alice-${lockId}`));
  await share(t, lockId, alice.userId);
  const device = await provisionDevice(t, sandbox.owner.token, sandbox.applicationId, lockId);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-revocation-'));
  dirs.push(dir);
  const state = new StateDir(dir);
  await saveProvisioning(state, { ...device, mqttUrl: `mqtts://127.0.0.1:${port}` }, device.key.privateKeyPem, 'http://127.0.0.1');
  agent = await DeviceAgent.start({ state, actuator: new VirtualActuator(), firmware: 'revocation-test', httpPort: 0, httpHost: '127.0.0.1', log: quiet });
  agent.client.on('connect', () => (reconnects += 1));
  expect(await eventually(() => agent.controller.config?.users.some((u) => u.userId === alice.userId) ?? false)).toBe(true);
  expect((await local(alice)).status).toBe(204);
  // Counted from here: the first connection may come after start() returned; only a later one is a reconnect.
  reconnects = 0;
});
afterEach(async () => {
  await agent?.stop().catch(() => undefined);
});

/** Alice's (or `holder`'s) fresh signed unlock, handed to the door's local endpoint. */
const local = (holder: KeyHolder) =>
  fetch(`http://127.0.0.1:${agent.httpPort}/execute`, { method: 'POST', headers: { 'content-type': 'application/jwt' }, body: signOperation(holder, lockId, UNLOCK) });
/** Resolves once the door refuses the holder's signed unlock (each try a new operation). */
const refusedByTheDoor = (holder: KeyHolder) => eventually(async () => (await local(holder)).status === 403);
const owner = (method: 'DELETE' | 'PUT', url: string, payload?: object) =>
  t.app.inject({ method, url: `/api/platform/application/${sandbox.applicationId}${url}`, headers: bearer(sandbox.owner.token), ...(payload ? { payload } : {}) });

describe('a connected door, after the owner’s 204', () => {
  it('refuses a user whose share was removed', async () => {
    expect((await owner('DELETE', `/lock/${lockId}/user/${alice.userId}`)).statusCode).toBe(204);
    expect(await refusedByTheDoor(alice)).toBe(true);
    expect(agent.controller.config!.users.some((u) => u.userId === alice.userId)).toBe(false);
    expect(reconnects).toBe(0);
  });

  it('refuses an application user who was removed from the application', async () => {
    const res = await owner('DELETE', '/user', { userId: alice.userId });
    expect(res.statusCode, res.body).toBe(204);
    expect(await refusedByTheDoor(alice)).toBe(true);
    expect(reconnects).toBe(0);
  });

  it('obeys nobody once its device is unbound: it was sent a config naming nobody before it was cut off, its withdrawn offline code still withdrawn', async () => {
    // An offline code for this hour, withdrawn: the door has it on its withdrawn list.
    const hour = Math.floor(Date.now() / 3_600_000) * 3600;
    const made = await t.app.inject({
      method: 'POST',
      url: `/api/platform/application/${sandbox.applicationId}/lock/${lockId}/access-code`,
      headers: bearer(sandbox.owner.token),
      payload: { name: 'Locksmith', kind: 'offline', start: hour, end: hour + 3600 },
    });
    expect(made.statusCode, made.body).toBe(201);
    const { accessCodeId, code } = made.json() as { accessCodeId: string; code: string };
    expect((await owner('DELETE', `/lock/${lockId}/access-code/${accessCodeId}`)).statusCode).toBe(204);
    expect(await eventually(() => (agent.controller.config?.withdrawnOfflineCodes ?? []).length === 1)).toBe(true);

    const before = agent.controller.config!.version;
    expect((await owner('DELETE', `/lock/${lockId}/device`)).statusCode).toBe(204);
    expect(await refusedByTheDoor(alice)).toBe(true);
    expect(agent.controller.config).toMatchObject({ users: [], offlineGraceSeconds: 60 });
    expect(agent.controller.config!.version).toBeGreaterThan(before);
    expect((await agent.controller.enterCode(code)).outcome).toBe('REFUSED');
    // Refused by the broker from now on, it could not deliver its refusals report as it stops: it ends without one.
    agent.client.end(true);
  });

  it('holds a lock setting change: the new unlock time and grace', async () => {
    const before = agent.controller.config!.version;
    expect((await owner('PUT', `/lock/${lockId}`, { settings: { unlockTime: 9 }, offlineGraceSeconds: 3600 })).statusCode).toBe(200);
    expect(await eventually(() => agent.controller.config!.version > before && agent.controller.config!.unlockTime === 9)).toBe(true);
    expect(agent.controller.config).toMatchObject({ offlineGraceSeconds: 3600 });
    expect(reconnects).toBe(0);
  });
});
