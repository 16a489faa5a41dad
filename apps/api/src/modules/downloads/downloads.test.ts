import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEVICE_PACKAGE_NOT_BUILT, DEVICE_PACKAGE_PATH, platformSetupSchema } from '@latchkey/contract';
import { createTestApp, uniqueEmail, type TestApp } from '../../../test/helpers.js';
import { isLoopbackUrl, networkAddresses } from './downloads.service.js';

const run = promisify(execFile);
const deviceDir = path.resolve(import.meta.dirname, '../../../../../packages/device');
const deviceVersion = (JSON.parse(fs.readFileSync(path.join(deviceDir, 'package.json'), 'utf8')) as { version: string }).version;
const tmp = (prefix: string) => fs.mkdtempSync(path.join(os.tmpdir(), prefix));

async function signUp(t: TestApp): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/api/auth/register', payload: { email: uniqueEmail('setup'), password: 'setup-pass', displayName: 'S' } });
  expect(res.statusCode).toBe(200);
  return (res.json() as { authToken: string }).authToken;
}

async function setupOf(t: TestApp) {
  const res = await t.app.inject({ url: '/api/platform/setup', headers: { authorization: `Bearer ${await signUp(t)}` } });
  expect(res.statusCode).toBe(200);
  return platformSetupSchema.parse(res.json());
}

/** A built service (its device package made as `npm run build` makes it) at the default PUBLIC_URL, a loopback one. */
let t: TestApp;
const downloads = tmp('latchkey-downloads-');
let url: string;
beforeAll(async () => {
  // What `npm run build` does for the service (apps/api/build.mjs), into this file's own directory.
  await run(process.execPath, [path.join(deviceDir, 'pack.mjs'), downloads]);
  t = await createTestApp({}, { downloadsDir: downloads });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const address = t.app.server.address();
  if (!address || typeof address === 'string') throw new Error('not listening');
  url = `http://127.0.0.1:${address.port}${DEVICE_PACKAGE_PATH}`;
});
afterAll(async () => {
  await t?.close();
  fs.rmSync(downloads, { recursive: true, force: true });
});

describe('the device package served by the platform', () => {
  const prefix = tmp('latchkey-prefix-');
  afterAll(() => fs.rmSync(prefix, { recursive: true, force: true }));

  it('installs with `npm install -g <PUBLIC_URL>/downloads/latchkey-device.tgz` and runs latchkey-device --version', async () => {
    // The package's own dependencies (mqtt, @peculiar/x509, reflect-metadata) come from the npm registry;
    // @latchkey/contract is bundled into dist/, so nothing of the workspace is needed.
    await run('npm', ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', url], { timeout: 50_000 });
    const bin = path.join(prefix, 'bin', 'latchkey-device');
    const { stdout } = await run(bin, ['--version']);
    expect(stdout.trim()).toBe(deviceVersion);
    const installed = path.join(prefix, 'lib', 'node_modules', '@latchkey', 'device');
    expect(fs.existsSync(path.join(installed, 'node_modules', '@latchkey', 'contract'))).toBe(false);
    expect((await run(bin, ['--help'])).stdout).toContain(`latchkey-device ${deviceVersion}`);
  });

  it('is served as a gzip download, and the setup names its URL under PUBLIC_URL with its version', async () => {
    const res = await t.app.inject({ url: DEVICE_PACKAGE_PATH });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/gzip');
    expect(res.rawPayload.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    expect((await setupOf(t)).devicePackage).toEqual({ url: `http://localhost:3000${DEVICE_PACKAGE_PATH}`, version: deviceVersion });
  });
});

describe('platform setup: the URLs other machines are given', () => {
  /** A service not built (no device package) whose PUBLIC_URL other machines can reach. */
  let reachable: TestApp;
  const empty = tmp('latchkey-downloads-empty-');
  beforeAll(async () => {
    reachable = await createTestApp({ PUBLIC_URL: 'http://192.0.2.10:3000' }, { downloadsDir: empty });
  });
  afterAll(async () => {
    await reachable?.close();
    fs.rmSync(empty, { recursive: true, force: true });
  });

  it('says when PUBLIC_URL and the broker URL are loopback addresses, and offers this machine’s network addresses', async () => {
    const setup = await setupOf(t);
    expect(setup).toMatchObject({ publicUrl: 'http://localhost:3000', publicUrlIsLoopback: true, brokerUrl: 'mqtts://localhost:8883', brokerUrlIsLoopback: true });
    expect(setup.networkAddresses).toEqual(networkAddresses());
    expect(setup.networkAddresses).not.toContain('127.0.0.1');
  });

  it('does not warn when PUBLIC_URL names an address other machines can reach, and then keeps this machine’s addresses to itself', async () => {
    expect(await setupOf(reachable)).toEqual({
      publicUrl: 'http://192.0.2.10:3000',
      publicUrlIsLoopback: false,
      brokerUrl: 'mqtts://192.0.2.10:8883',
      brokerUrlIsLoopback: false,
      networkAddresses: [],
      devicePackage: null,
    });
  });

  it('needs a signed-in account', async () => {
    for (const app of [t.app, reachable.app]) expect((await app.inject({ url: '/api/platform/setup' })).statusCode).toBe(401);
  });

  it('answers 404 saying how to build it when the service was not built', async () => {
    const res = await reachable.app.inject({ url: DEVICE_PACKAGE_PATH });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ code: 404, message: DEVICE_PACKAGE_NOT_BUILT });
    expect((await setupOf(reachable)).devicePackage).toBeNull();
  });

  it('knows loopback hosts and leaves out loopback and link-local interface addresses', () => {
    for (const url of ['http://localhost:3000', 'http://app.localhost', 'http://127.0.0.1:3000', 'http://127.1.2.3', 'http://[::1]:3000', 'http://0.0.0.0:3000', 'mqtts://localhost:8883'])
      expect(isLoopbackUrl(url), url).toBe(true);
    for (const url of ['http://192.168.1.20:3000', 'https://latchkey.example.com', 'http://[2001:db8::1]:3000', 'mqtts://10.0.0.5:8883'])
      expect(isLoopbackUrl(url), url).toBe(false);
    const iface = (address: string, family: 'IPv4' | 'IPv6', internal = false) =>
      ({ address, family, internal, netmask: '', mac: '', cidr: null, ...(family === 'IPv6' ? { scopeid: 0 } : {}) }) as os.NetworkInterfaceInfo;
    expect(
      networkAddresses({
        lo: [iface('127.0.0.1', 'IPv4', true), iface('::1', 'IPv6', true)],
        eth0: [iface('fe80::1', 'IPv6'), iface('2001:db8::5', 'IPv6'), iface('192.168.1.20', 'IPv4')],
        wlan0: [iface('10.0.0.7', 'IPv4')],
      }),
    ).toEqual(['192.168.1.20', '10.0.0.7', '2001:db8::5']);
  });
});
