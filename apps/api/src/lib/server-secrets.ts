import { eq } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { serverSecrets } from '../db/schema.js';
import type { SecretBox } from './secret-box.js';

/**
 * A secret every instance must share, kept in the database: the first instance to ask creates it, and a
 * second one starting at the same moment cannot create a different one (the insert does nothing on
 * conflict, and both then read the row that won). `create` may run on both; only one result is kept.
 * The stored value is sealed with `box` (the caller's, made from SECRETS_ENCRYPTION_KEY), which keeps
 * values as they are without a key; callers always get the plain value.
 */
export async function loadOrCreateSharedSecret(db: Db, box: SecretBox, name: string, create: () => Promise<string> | string): Promise<string> {
  const [existing] = await db.select({ value: serverSecrets.value }).from(serverSecrets).where(eq(serverSecrets.name, name));
  if (existing) return box.open(existing.value);
  await db.insert(serverSecrets).values({ name, value: box.seal(await create()) }).onConflictDoNothing();
  const [stored] = await db.select({ value: serverSecrets.value }).from(serverSecrets).where(eq(serverSecrets.name, name));
  if (!stored) throw new Error(`Server secret ${name} could not be stored`);
  return box.open(stored.value);
}

