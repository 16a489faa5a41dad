import { X509Certificate, generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CERTIFICATE_MIN_REMAINING_DAYS, operationErrors, platformUserErrors, type CertificateResponse } from '@latchkey/contract';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import { bearer } from '../../../test/fixtures/platform-users.js';
import { appUserToken, certifyWithCode, createSandbox, type Sandbox } from '../../../test/fixtures/operations.js';

/** POST /auth/certificate issues a real X.509 chain to our CA for either kind of user token. */
let t: TestApp;
let sandbox: Sandbox;
const DAY = 86_400_000;

beforeAll(async () => {
  t = await createTestApp();
  sandbox = await createSandbox(t);
});
afterAll(() => t?.close());

const request = (token: string | undefined, ephemeralKey: unknown) =>
  t.app.inject({ method: 'POST', url: '/api/auth/certificate', headers: token ? bearer(token) : {}, payload: { ephemeralKey } });
const ed25519 = () => generateKeyPairSync('ed25519').publicKey;
const spki = (key = ed25519()) => key.export({ format: 'der', type: 'spki' });

/** DER elements one after another in `buf`: each one's tag and content. */
function elements(buf: Buffer): { tag: number; content: Buffer }[] {
  const out: { tag: number; content: Buffer }[] = [];
  for (let i = 0; i < buf.length; ) {
    let length = buf[i + 1]!;
    let start = i + 2;
    if (length & 0x80) {
      start += length & 0x7f;
      length = [...buf.subarray(i + 2, start)].reduce((a, b) => a * 256 + b, 0);
    }
    out.push({ tag: buf[i]!, content: buf.subarray(start, start + length) });
    i = start + length;
  }
  return out;
}

/** Where the JVM SDK reads notAfter from: the TBS certificate's fifth element (so a v3 certificate). */
function validityAtTbsIndexFour(der: Buffer): boolean {
  const tbs = elements(elements(der)[0]!.content)[0]!;
  const validity = elements(tbs.content)[4];
  return validity?.tag === 0x30 && elements(validity.content).length === 2;
}

describe('POST /auth/certificate', () => {
  it('certifies a raw libsodium key for a portal user (after the emailed code): leaf first, signed by the platform CA', async () => {
    const pair = generateKeyPairSync('ed25519');
    const key = pair.publicKey;
    expect((await request(sandbox.owner.token, spki(key).subarray(12).toString('base64'))).statusCode).toBe(423);
    const res = await certifyWithCode(t, sandbox.owner.token, pair);
    expect(res.statusCode).toBe(200);
    const body = res.json() as CertificateResponse;
    expect(body.userId).toBe(sandbox.owner.userId);
    expect(body.certificateChain).toHaveLength(2);
    const [leaf, ca] = body.certificateChain.map((c) => new X509Certificate(Buffer.from(c, 'base64')));
    expect(ca!.ca).toBe(true);
    expect(leaf!.ca).toBe(false);
    expect(leaf!.verify(ca!.publicKey)).toBe(true);
    expect(leaf!.checkIssued(ca!)).toBe(true);
    expect(leaf!.subject).toContain(`CN=${sandbox.owner.userId}`);
    expect(leaf!.publicKey.export({ format: 'der', type: 'spki' }).equals(spki(key))).toBe(true);
    const remaining = Date.parse(leaf!.validTo) - Date.now();
    expect(remaining).toBeGreaterThan(29 * DAY);
    expect(remaining).toBeLessThan(31 * DAY);
    // The SDKs re-register when fewer than 7 days are left, reading notAfter from the v3 TBS layout.
    expect(remaining).toBeGreaterThan(CERTIFICATE_MIN_REMAINING_DAYS * DAY);
    expect(validityAtTbsIndexFour(Buffer.from(body.certificateChain[0]!, 'base64'))).toBe(true);
    expect(body.certificateChain[0]).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
  });

  it('takes DER SPKI (the JVM SDK) and the application user token of a partner backend', async () => {
    const token = await appUserToken(sandbox, 'cert-user', 'cert.user@example.com');
    const key = ed25519();
    const res = await request(token, spki(key).toString('base64'));
    expect(res.statusCode).toBe(200);
    const body = res.json() as CertificateResponse;
    const users = await t.app.inject({ method: 'GET', url: `/api/platform/application/${sandbox.applicationId}/user?search=cert.user`, headers: bearer(sandbox.owner.token) });
    expect(users.json().users[0].userId).toBe(body.userId);
    const leaf = new X509Certificate(Buffer.from(body.certificateChain[0]!, 'base64'));
    expect(leaf.subject).toContain(`CN=${body.userId}`);

    const account = await t.app.inject({ method: 'GET', url: '/api/account', headers: bearer(token) });
    expect(account.json()).toEqual({ userId: body.userId, email: 'cert.user@example.com', displayName: 'User cert-user', emailVerified: false, publicKey: null });
  });

  it('uses one CA across instances: the chain from a second instance ends at the same certificate', async () => {
    const other = await t.secondInstance();
    try {
      const token = await appUserToken(sandbox, 'two-instances');
      const res = await other.app.inject({ method: 'POST', url: '/api/auth/certificate', headers: bearer(token), payload: { ephemeralKey: spki().toString('base64') } });
      const first = await request(token, spki().toString('base64'));
      expect(res.json().certificateChain[1]).toBe(first.json().certificateChain[1]);
    } finally {
      await other.close();
    }
  });

  it('refuses what is not an Ed25519 public key with a clear 400', async () => {
    const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'der', type: 'spki' });
    for (const bad of ['not base64!', Buffer.alloc(31, 1).toString('base64'), p256.toString('base64'), 'AAAA', 42, '']) {
      const res = await request(sandbox.owner.token, bad);
      expect(res.statusCode, String(bad)).toBe(400);
      if (typeof bad === 'string' && bad.length > 0) expect(res.json()).toEqual({ code: 400, message: operationErrors.ephemeralKeyInvalid });
    }
  });

  it('needs a user token', async () => {
    expect((await request(undefined, spki().toString('base64'))).statusCode).toBe(401);
    const forged = await appUserToken({ ...sandbox, issuer: 'https://unknown.example' }, 'x');
    const res = await request(forged, spki().toString('base64'));
    expect(res.statusCode).toBe(401);
    expect(res.json().message).toBe(platformUserErrors.tokenNotVerified);
  });

  it('keeps application tokens off /platform/*, password and refresh', async () => {
    const token = await appUserToken(sandbox, 'not-an-owner');
    const calls = [
      { method: 'GET' as const, url: '/api/platform/application' },
      { method: 'GET' as const, url: `/api/platform/application/${sandbox.applicationId}` },
      { method: 'POST' as const, url: '/api/account/password', payload: { oldPassword: 'x', newPassword: 'yyyyyy' } },
      { method: 'POST' as const, url: '/api/account', payload: { displayName: 'Mallory' } },
      { method: 'POST' as const, url: '/api/auth/token/refresh' },
    ];
    for (const call of calls) {
      const res = await t.app.inject({ ...call, headers: bearer(token) });
      expect(res.statusCode, call.url).toBe(401);
    }
  });
});
