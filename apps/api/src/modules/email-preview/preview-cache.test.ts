import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import { applications } from '../../db/schema.js';
import { seedApplication } from '../../../test/fixtures/logos.js';

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

const preview = (app: FastifyInstance, id: string) => app.inject({ url: `/api/email/preview/${id}` });

describe('the rendered previews', () => {
  it('are each app\'s own: an app in the same process renders what the first one has cached afresh', async () => {
    const id = await seedApplication(t, null, { name: 'Cached Name' });
    expect((await preview(t.app, id)).body).toContain('Cached Name');
    // Changed behind the service's back (the version stays), so only a cache that never saw it reads it anew.
    await t.database.db.update(applications).set({ name: 'Stored Name' }).where(eq(applications.id, id));
    expect((await preview(t.app, id)).body).toContain('Cached Name');
    const fromSecond = (await preview(second.app, id)).body;
    expect(fromSecond).toContain('Stored Name');
    expect(fromSecond).not.toContain('Cached Name');
  });
});
