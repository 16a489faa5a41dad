import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, test, type APIRequestContext } from '@playwright/test';
import { SignJWT, importJWK } from 'jose';
import { baseURL } from '../playwright.config';
import { createAppViaApi, registerViaApi, uniqueEmail } from './support';

/** The `latchkey-device` command as a developer runs it, from the repository's source through tsx. */
const CLI = path.resolve(import.meta.dirname, '../packages/device/src/cli.ts');
const ROOT = path.resolve(import.meta.dirname, '..');
const ISSUER = 'https://auth.local-unlock.example.com';
const KID = 'local-unlock-key';
const WEB_APP = `${baseURL}/door-app`;
/** The lock's shape the headless SDK asks for (its BasicLockResponse), which carries the direct-access endpoints. */
const LOCK_V3 = 'application/vnd.doordeck.api-v3+json';
type SdkLock = { id: string; settings: { directAccessEndpoints: string[] } };

/** A TCP relay between the device and the broker, which the test can cut (every connection reset) and restore on the same port. */
class BrokerLink {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly brokerPort: number) {}

  async open(): Promise<void> {
    this.server = createServer((device) => {
      const broker = createConnection(this.brokerPort, '127.0.0.1');
      for (const socket of [device, broker]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      device.pipe(broker).pipe(device);
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** The building's internet goes down: nothing listens on the port any more and open connections are reset. */
  async cut(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server!.close(() => resolve()));
    for (const socket of this.sockets) socket.resetAndDestroy();
    await closed;
    this.server = null;
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface DeviceProcess {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function startDevice(started: DeviceProcess[], ...args: string[]): DeviceProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const device = { child, output: () => output, exited };
  started.push(device);
  return device;
}

async function ok<T>(response: Promise<{ status: () => number; json: () => Promise<unknown>; text: () => Promise<string> }>): Promise<T> {
  const res = await response;
  expect(res.status(), await res.text()).toBeLessThan(300);
  return (res.status() === 204 ? null : await res.json()) as T;
}

/** An application user's token, as the developer's backend signs it for the SDK. */
async function userToken(request: APIRequestContext, privateJwk: object, email: string): Promise<string> {
  const { platformAudience } = (await (await request.get('/api/config')).json()) as { platformAudience: string };
  return new SignJWT({ email })
    .setProtectedHeader({ alg: 'ES256', kid: KID, typ: 'JWT' })
    .setIssuer(ISSUER)
    .setAudience(platformAudience)
    .setSubject(email)
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(await importJWK({ ...privateJwk }, 'ES256'));
}

/**
 * The door without the cloud: a lock with a real `latchkey-device` serving its local endpoint, whose link
 * to the broker is cut. A browser page does what the headless SDK's unlock does — the signed operation
 * POSTed (`application/jwt`) to `/device/{id}/execute` and, at once, to every URL of the lock's
 * `settings.directAccessEndpoints`, the first success winning — and the door opens through the local
 * endpoint while the cloud answers that the lock is offline. When the link is back the device reports the
 * unlock, and the lock's activity shows it once, as the user's, with method local.
 */
test('a browser opens a device-backed lock through its local endpoint while the device is cut off from the broker, and the unlock is logged once with method local when it is back', async ({ page, request }) => {
  test.setTimeout(150_000);
  const owner = uniqueEmail('local.owner');
  const doorUser = uniqueEmail('local.user');
  const { authToken } = await registerViaApi(request, owner, 'Local Owner');
  const headers = { authorization: `Bearer ${authToken}` };
  const appId = await createAppViaApi(request, authToken, 'Local Doors');
  const app = `/api/platform/application/${appId}`;
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  await ok(request.post(`${app}/auth/key`, { headers, data: { ...publicKey.export({ format: 'jwk' }), kid: KID } }));
  await ok(request.post(`${app}/auth/issuer`, { headers, data: { url: ISSUER } }));
  const locks = await ok<{ id: string }[]>(request.get(`${app}/lock`, { headers }));
  const lockId = locks[0]!.id;
  await ok(request.put(`${app}/lock/${lockId}`, { headers, data: { settings: { unlockTime: 3 } } }));
  await ok(request.post(`${app}/lock/${lockId}/user`, { headers, data: { email: doorUser, role: 'USER' } }));
  // The door app's page. The platform answers CORS on its /platform routes only, so a page on another
  // origin cannot call the SDK's routes (/auth/certificate, /device/…): the page is served on the
  // platform's origin (a document of its own, without the portal's CSP), and the device is another origin.
  // The visitor lets the page reach devices on the local network, as Chromium asks them to (Local Network Access).
  await page.context().grantPermissions(['local-network-access'], { origin: baseURL });
  await page.route(WEB_APP, (route) => route.fulfill({ contentType: 'text/html', body: '<!doctype html><html lang="en"><title>Door app</title><p>Door app</p></html>' }));
  const { provisioningCode } = await ok<{ provisioningCode: string }>(request.post(`${app}/lock/${lockId}/device`, { headers }));

  const dir = await mkdtemp(path.join(tmpdir(), 'latchkey-local-unlock-'));
  const relay = path.join(dir, 'relay-opened');
  const started: DeviceProcess[] = [];
  let link: BrokerLink | undefined;
  try {
    const stateDir = path.join(dir, 'state');
    const provisioning = startDevice(started, 'provision', '--api', `${baseURL}/api`, '--code', provisioningCode, '--dir', stateDir);
    expect(await provisioning.exited, provisioning.output()).toBe(0);
    // The device reaches the broker through a link the test can cut, as a building's internet goes down.
    const identityFile = path.join(stateDir, 'device.json');
    const identity = JSON.parse(await readFile(identityFile, 'utf8')) as { mqttUrl: string };
    const brokerUrl = new URL(identity.mqttUrl);
    link = new BrokerLink(Number(brokerUrl.port));
    await link.open();
    brokerUrl.port = String(link.port);
    await writeFile(identityFile, JSON.stringify({ ...identity, mqttUrl: brokerUrl.toString().replace(/\/$/, '') }));
    const httpPort = await freePort();
    const endpoint = `http://127.0.0.1:${httpPort}/execute`;
    // The relay: a command the device runs to open the door, leaving a mark the test can see.
    const device = startDevice(
      started,
      'run', '--dir', stateDir,
      '--actuator', 'command', '--unlock-command', `touch ${relay}`, '--lock-command', 'true',
      '--http-port', String(httpPort), '--http-host', '127.0.0.1', '--advertise', endpoint,
    );

    // The user's app, online: it reads the lock (with its direct-access endpoints) and has its key certified.
    const token = await userToken(request, privateKey.export({ format: 'jwk' }), doorUser);
    await expect
      .poll(async () => (await ok<SdkLock>(request.get(`/api/device/${lockId}`, { headers: { authorization: `Bearer ${token}`, accept: LOCK_V3 } }))).settings.directAccessEndpoints, { timeout: 30_000 })
      .toEqual([endpoint]);
    await page.goto(WEB_APP);
    const lockSeen = await page.evaluate(
      async ({ api, token, lockId, accept }) => {
        const auth = { authorization: `Bearer ${token}` };
        const keys = (await crypto.subtle.generateKey('Ed25519', false, ['sign', 'verify'])) as CryptoKeyPair;
        const raw = new Uint8Array(await crypto.subtle.exportKey('raw', keys.publicKey));
        const certificate = await fetch(`${api}/auth/certificate`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ ephemeralKey: btoa(String.fromCharCode(...raw)) }),
        });
        const { certificateChain, userId } = (await certificate.json()) as { certificateChain: string[]; userId: string };
        const lock = (await (await fetch(`${api}/device/${lockId}`, { headers: { ...auth, accept } })).json()) as { settings: { directAccessEndpoints: string[] } };
        Object.assign(window, { sdk: { keys, certificateChain, userId, lock } });
        return lock.settings.directAccessEndpoints;
      },
      { api: `${baseURL}/api`, token, lockId, accept: LOCK_V3 },
    );
    expect(lockSeen).toEqual([endpoint]);

    // The internet goes down between the door and the broker; the platform sees the device drop.
    await link.cut();
    await expect
      .poll(async () => (await ok<{ connected: boolean }>(request.get(`${app}/lock/${lockId}/device`, { headers }))).connected, { timeout: 30_000 })
      .toBe(false);
    expect(existsSync(relay)).toBe(false);

    // The SDK's unlock: one signed operation to the cloud and to every direct-access endpoint at once.
    const outcome = await page.evaluate(async ({ api, token }) => {
      const { keys, certificateChain, userId, lock } = (window as unknown as { sdk: { keys: CryptoKeyPair; certificateChain: string[]; userId: string; lock: { id: string; settings: { directAccessEndpoints: string[] } } } }).sdk;
      const b64url = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
      const text = (value: unknown) => b64url(new TextEncoder().encode(JSON.stringify(value)));
      const now = Math.floor(Date.now() / 1000);
      const input = `${text({ alg: 'EdDSA', typ: 'JWT', x5c: certificateChain })}.${text({ iss: userId, sub: lock.id, nbf: now, iat: now, exp: now + 60, jti: crypto.randomUUID(), operation: { type: 'MUTATE_LOCK', locked: false } })}`;
      const signature = new Uint8Array(await crypto.subtle.sign('Ed25519', keys.privateKey, new TextEncoder().encode(input)));
      const jws = `${input}.${b64url(signature)}`;
      const statuses: Record<string, number | string> = {};
      const post = async (url: string, extra: Record<string, string>) => {
        try {
          const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/jwt', ...extra }, body: jws });
          statuses[url] = response.status;
          if (!response.ok) throw new Error(`${url}: ${response.status}`);
          return url;
        } catch (error) {
          statuses[url] ??= String(error);
          throw error;
        }
      };
      const requests = [
        post(`${api}/device/${lock.id}/execute`, { authorization: `Bearer ${token}` }),
        ...lock.settings.directAccessEndpoints.map((url) => post(url, {})),
      ];
      const first = await Promise.any(requests).catch(() => null);
      await Promise.allSettled(requests);
      return { first, statuses };
    }, { api: `${baseURL}/api`, token });
    // The door opened through its local endpoint; the cloud could not reach it.
    expect(outcome.first, JSON.stringify(outcome.statuses)).toBe(endpoint);
    expect(outcome.statuses).toEqual({ [endpoint]: 204, [`${baseURL}/api/device/${lockId}/execute`]: 503 });
    await expect.poll(() => existsSync(relay)).toBe(true);

    // The link is back: the device reconnects and reports what it decided alone, logged once as the user's.
    await link.open();
    await expect
      .poll(async () => (await ok<{ connected: boolean }>(request.get(`${app}/lock/${lockId}/device`, { headers }))).connected, { timeout: 60_000 })
      .toBe(true);
    type Entry = { type: string; method: string | null; rejected: boolean; actor: { email: string | null } };
    const localEntries = async () =>
      (await ok<{ items: Entry[] }>(request.get(`${app}/lock/${lockId}/log`, { headers }))).items.filter((entry) => entry.method === 'local');
    await expect.poll(async () => (await localEntries()).length, { timeout: 30_000 }).toBe(1);
    const [entry] = await localEntries();
    expect(entry, JSON.stringify(entry)).toMatchObject({ type: 'UNLOCK', method: 'local', rejected: false, actor: { email: doorUser } });
    // The device delivers its pending reports on each connection: a second one must not log it again.
    const connections = device.output().split('Connected to').length;
    await link.cut();
    await link.open();
    await expect.poll(() => device.output().split('Connected to').length, { timeout: 60_000 }).toBeGreaterThan(connections);
    await expect
      .poll(async () => (await ok<{ connected: boolean }>(request.get(`${app}/lock/${lockId}/device`, { headers }))).connected, { timeout: 30_000 })
      .toBe(true);
    expect(await localEntries()).toHaveLength(1);
  } finally {
    for (const { child, exited } of started) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    }
    if (link) await link.cut().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
});
