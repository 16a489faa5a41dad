import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, uniqueEmail, type TestApp } from '../helpers.js';

/** Concurrency: parallel owners never lose one another's additions or edits. */
let t: TestApp;
const OWNERS = 50;

async function register() {
  const res = await t.app.inject({ method: 'POST', url: '/api/auth/register', payload: { email: uniqueEmail('conc'), password: 'conc-pass' } });
  expect(res.statusCode).toBe(200);
  const { authToken, refreshToken } = res.json() as { authToken: string; refreshToken: string };
  const sub = JSON.parse(Buffer.from(authToken.split('.')[1]!, 'base64url').toString()).sub as string;
  return { token: authToken, refreshToken, userId: sub };
}
const auth = (token: string) => ({ authorization: `Bearer ${token}` });

beforeAll(async () => {
  t = await createTestApp({ ARGON2_MEMORY_KIB: '19456' });
});
afterAll(() => t?.close());

describe('concurrency', () => {
  it(`${OWNERS} parallel owners add keys, issuers, CORS domains and owners, and edit distinct fields: nothing lost`, async () => {
    const owners = await Promise.all(Array.from({ length: OWNERS }, register));
    const newcomers = await Promise.all(Array.from({ length: OWNERS }, register));
    const first = owners[0]!;
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/platform/application',
      headers: auth(first.token),
      payload: { name: 'Shared', companyName: 'Shared Co', mailingAddress: '1 Shared Road' },
    });
    const appId = created.headers.location!.toString().split('/').pop()!;
    for (const o of owners.slice(1)) {
      const r = await t.app.inject({ method: 'POST', url: `/api/platform/application/${appId}/owner`, headers: auth(first.token), payload: { userId: o.userId } });
      expect(r.statusCode).toBe(204);
    }
    const edits: Record<string, unknown>[] = [
      { name: 'Renamed' },
      { companyName: 'Renamed Co' },
      { mailingAddress: '2 New Road' },
      { privacyPolicy: 'https://example.com/privacy' },
      { supportContact: 'mailto:help@example.com' },
      { appLink: 'https://example.com/app' },
      { emailPreferences: { senderEmail: 'sender@example.com' } },
      { emailPreferences: { senderName: 'Sender' } },
      { emailPreferences: { primaryColour: '#123456' } },
      { emailPreferences: { secondaryColour: '#abcdef' } },
      { emailPreferences: { onlySendEssentialEmails: false } },
    ];
    const base = `/api/platform/application/${appId}`;
    const statuses = await Promise.all(
      owners.flatMap((o, i) => {
        const { publicKey } = generateKeyPairSync('ed25519');
        const jwk = { ...publicKey.export({ format: 'jwk' }), kid: `key-${i}` };
        return [
          t.app.inject({ method: 'POST', url: `${base}/auth/key`, headers: auth(o.token), payload: jwk }),
          t.app.inject({ method: 'POST', url: `${base}/auth/issuer`, headers: auth(o.token), payload: { url: `https://issuer-${i}.example.com` } }),
          t.app.inject({ method: 'POST', url: `${base}/cors`, headers: auth(o.token), payload: { url: `https://cors-${i}.example.com` } }),
          t.app.inject({ method: 'POST', url: `${base}/owner`, headers: auth(o.token), payload: { userId: newcomers[i]!.userId } }),
          ...(edits[i] ? [t.app.inject({ method: 'POST', url: base, headers: auth(o.token), payload: edits[i] })] : []),
        ];
      }),
    ).then((rs) => rs.map((r) => r.statusCode));
    expect(statuses.filter((s) => s !== 204)).toEqual([]);

    const app = (await t.app.inject({ url: base, headers: auth(first.token) })).json();
    expect(Object.keys(app.authKeys).sort()).toEqual(owners.map((_, i) => `key-${i}`).sort());
    expect(app.authDomains).toHaveLength(OWNERS);
    expect(app.corsDomains).toHaveLength(OWNERS);
    expect(app.owners).toHaveLength(OWNERS * 2);
    expect(app).toMatchObject({
      name: 'Renamed',
      companyName: 'Renamed Co',
      mailingAddress: '2 New Road',
      privacyPolicy: 'https://example.com/privacy',
      supportContact: 'mailto:help@example.com',
      appLink: 'https://example.com/app',
      emailPreferences: { senderEmail: 'sender@example.com', senderName: 'Sender', primaryColour: '#123456', secondaryColour: '#abcdef', onlySendEssentialEmails: false },
    });
  }, 120_000);

  it('two concurrent refreshes with one refresh token: one wins, the reuse revokes the session', async () => {
    const user = await register();
    const refresh = () => t.app.inject({ method: 'POST', url: '/api/auth/token/refresh', headers: auth(user.refreshToken) });
    const [a, b] = await Promise.all([refresh(), refresh()]);
    expect([a.statusCode, b.statusCode].sort()).toEqual([200, 401]);
    const winner = (a.statusCode === 200 ? a : b).json() as { authToken: string; refreshToken: string };
    // The reuse revoked the whole session: the winner's fresh tokens are dead too.
    expect((await t.app.inject({ url: '/api/account', headers: auth(winner.authToken) })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'POST', url: '/api/auth/token/refresh', headers: auth(winner.refreshToken) })).statusCode).toBe(401);
  });
});
