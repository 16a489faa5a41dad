import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiErrors } from '@latchkey/contract';
import { createTestApp, type TestApp } from '../../test/helpers.js';
import { createOwner } from '../../test/fixtures/platform-users.js';
import { appUserToken, createSandbox } from '../../test/fixtures/operations.js';

/**
 * Limits per principal: RATE_LIMIT_MAX per signed-in user, ANONYMOUS_RATE_LIMIT_MAX per address,
 * DIRECTORY_RATE_LIMIT_MAX look-ups per user. Every request here comes from one address (one office
 * behind one NAT) unless it says otherwise.
 */
const OFFICE = '203.0.113.7';
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ RATE_LIMIT_MAX: '5', ANONYMOUS_RATE_LIMIT_MAX: '4', DIRECTORY_RATE_LIMIT_MAX: '3' });
});
afterAll(() => t?.close());

const get = (url: string, token?: string, remoteAddress = OFFICE) =>
  t.app.inject({ method: 'GET', url: `/api${url}`, remoteAddress, headers: token ? { authorization: `Bearer ${token}` } : {} });
const lookup = (email: string, token: string) =>
  t.app.inject({ method: 'POST', url: '/api/directory/query', remoteAddress: OFFICE, headers: { authorization: `Bearer ${token}` }, payload: { email } });

async function statuses(n: number, request: () => Promise<{ statusCode: number }>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await request()).statusCode);
  return out;
}

describe('rate limits per principal', () => {
  it('limits a signed-in user on their own budget: user A limited does not throttle user B on the same address', async () => {
    const a = await createOwner(t);
    const b = await createOwner(t);
    expect(await statuses(6, () => get('/platform/application', a.token))).toEqual([200, 200, 200, 200, 200, 429]);
    const limited = await get('/platform/application', a.token);
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toEqual({ code: 429, message: apiErrors.tooManyAttempts });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(limited.headers['x-ratelimit-limit']).toBe('5');
    // Same address, another user: a full budget of their own.
    expect(await statuses(5, () => get('/platform/application', b.token))).toEqual([200, 200, 200, 200, 200]);
    // Nor was the office's address charged: its whole anonymous budget is left.
    expect(await statuses(5, () => get('/account'))).toEqual([401, 401, 401, 401, 429]);
  });

  it('counts requests without a token per address, and other addresses are not affected', async () => {
    const here = '198.51.100.1';
    expect(await statuses(5, () => get('/account', undefined, here))).toEqual([401, 401, 401, 401, 429]);
    const res = await get('/account', undefined, here);
    expect(res.statusCode).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect((await get('/account', undefined, '198.51.100.2')).statusCode).toBe(401);
  });

  it('counts made-up tokens against their address: inventing tokens buys no budget', async () => {
    const here = '198.51.100.3';
    const fake = (i: number) => `eyJhbGciOiJFZERTQSJ9.${Buffer.from(JSON.stringify({ sub: `user-${i}` })).toString('base64url')}.c2ln`;
    let i = 0;
    expect(await statuses(5, () => get('/platform/application', fake(i++), here))).toEqual([401, 401, 401, 401, 429]);
  });

  it('limits an application-signed token per application user (its first request counts against its address)', async () => {
    const sandbox = await createSandbox(t);
    const one = await appUserToken(sandbox, 'rl-one');
    const two = await appUserToken(sandbox, 'rl-two');
    const here = '198.51.100.9';
    // The request that finds the token outside the access cache counts against the address: the first one,
    // and on PostgreSQL any that follows a change notice which emptied the cache. So `one` gets its own
    // five and one or two more, then 429; `two`, on the same address, still has all of its own.
    const first = await statuses(9, () => get('/account', one, here));
    const limitedAt = first.indexOf(429);
    expect(limitedAt).toBeGreaterThanOrEqual(6);
    expect(first.slice(0, limitedAt).every((s) => s === 200)).toBe(true);
    expect(await statuses(5, () => get('/account', two, here))).toEqual([200, 200, 200, 200, 200]);
  });

  it('limits directory look-ups by email per user, on top of the request budget', async () => {
    const a = await createOwner(t);
    const b = await createOwner(t);
    expect(await statuses(4, () => lookup(b.email, a.token))).toEqual([200, 200, 200, 429]);
    const res = await lookup('nobody@example.com', a.token);
    expect(res.statusCode).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect((await lookup(a.email, b.token)).statusCode).toBe(200);
  });
});
