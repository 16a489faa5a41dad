import { randomUUID } from 'node:crypto';
import { applicationOwners, applications, sessions, users } from '../../db/schema.js';
import { uniqueEmail, type TestApp } from '../../../test/helpers.js';

/** A portal user with a live session, straight in the database (no dependency on the auth routes). */
export async function seedOwner(t: TestApp): Promise<{ userId: string; token: string }> {
  const email = uniqueEmail('logo');
  const [user] = await t.database.db.insert(users).values({ email, passwordHash: 'x', emailVerified: true }).returning();
  const [session] = await t.database.db
    .insert(sessions)
    .values({ userId: user!.id, refreshJti: randomUUID(), publicKey: 'test', expiresAt: new Date(Date.now() + 3_600_000) })
    .returning();
  return { userId: user!.id, token: await t.app.tokens.signAccess({ sub: user!.id, email, sid: session!.id }) };
}

export async function seedApplication(t: TestApp, ownerId: string | null, values: Partial<typeof applications.$inferInsert> = {}): Promise<string> {
  const [app] = await t.database.db.insert(applications).values({ name: 'Acme Doors', companyName: 'Acme Ltd', mailingAddress: '1 Road', ...values }).returning();
  if (ownerId) await t.database.db.insert(applicationOwners).values({ applicationId: app!.id, userId: ownerId });
  return app!.id;
}
