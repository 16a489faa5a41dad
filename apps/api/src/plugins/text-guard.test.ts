import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messages } from '@latchkey/contract';
import { createTestApp, uniqueEmail, type TestApp } from '../../test/helpers.js';

/** NUL never reaches PostgreSQL — wherever it sits in a request, the answer is a 400, not a 500. */
let t: TestApp;
let auth: { authorization: string };
let appUrl: string;

beforeAll(async () => {
  t = await createTestApp();
  const reg = await t.app.inject({ method: 'POST', url: '/api/auth/register', payload: { email: uniqueEmail('nul'), password: 'nul-pass' } });
  auth = { authorization: `Bearer ${reg.json().authToken}` };
  const created = await t.app.inject({ method: 'POST', url: '/api/platform/application', headers: auth, payload: { name: 'Nul', companyName: 'Nul Co', mailingAddress: 'Road' } });
  appUrl = `/api/platform/application/${created.headers.location!.toString().split('/').pop()}`;
});
afterAll(() => t?.close());

describe('NUL in a request', () => {
  it.each([
    ['a body member no schema of the route checks for it', 'DELETE', '/auth/key', { kid: 'key\u0000' }],
    ['a query member no schema names', 'GET', '/history?x%00y=1', undefined],
    ['a query value no schema names', 'GET', '/lock?z=a%00b', undefined],
    ['a body key', 'POST', '', { name: 'ok', 'x\u0000': 1 }],
    ['a path parameter', 'GET', '/lock/a%00b', undefined],
  ])('in %s: 400 with the contract message', async (_what, method, path, payload) => {
    const res = await t.app.inject({ method: method as 'GET', url: `${appUrl}${path}`, headers: auth, ...(payload ? { payload } : {}) });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 400, message: messages.controlCharacters });
  });

  it('in a device lock id or a log filter: 400', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/device/a%00b', headers: auth });
    expect(res.statusCode).toBe(400);
  });
});
