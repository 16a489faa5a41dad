import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import { afterReply, settleAccountMail } from './account-trust.service.js';

let t: TestApp;
let second: { app: FastifyInstance; close: () => Promise<void> };
beforeAll(async () => {
  t = await createTestApp();
  second = await t.secondInstance();
});
afterAll(async () => {
  await second?.close();
  await t?.close();
});

describe('work after the answer', () => {
  it("is each app's own: settling one app waits for none of another app's work", async () => {
    const order: string[] = [];
    // Finishes on the next turn of the event loop, after every promise already settled has run.
    afterReply(t.app, () => new Promise<void>((resolve) => setImmediate(() => (order.push('first app: work done'), resolve()))));
    await settleAccountMail(second.app);
    order.push('second app: settled');
    await settleAccountMail(t.app);
    order.push('first app: settled');
    expect(order).toEqual(['second app: settled', 'first app: work done', 'first app: settled']);
  });
});
