import { eq } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { serverSecrets } from '../db/schema.js';
import { SecretBox } from './secret-box.js';

/** The box each database's secrets are sealed with; set once by buildApp (useSecretBox). */
const boxes = new WeakMap<Db, SecretBox>();
const plain = new SecretBox(undefined);

/** Every secret read or created through `db` from now on is sealed with `box` (SECRETS_ENCRYPTION_KEY). */
export function useSecretBox(db: Db, box: SecretBox): void {
  boxes.set(db, box);
}

export function secretBoxOf(db: Db): SecretBox {
  return boxes.get(db) ?? plain;
}

/**
 * A secret every instance must share, kept in the database: the first instance to ask creates it, and a
 * second one starting at the same moment cannot create a different one (the insert does nothing on
 * conflict, and both then read the row that won). `create` may run on both; only one result is kept.
 * The stored value is sealed when an encryption key is configured; callers always get the plain value.
 */
export async function loadOrCreateSecret(db: Db, name: string, create: () => Promise<string> | string): Promise<string> {
  const box = secretBoxOf(db);
  const [existing] = await db.select({ value: serverSecrets.value }).from(serverSecrets).where(eq(serverSecrets.name, name));
  if (existing) return box.open(existing.value);
  await db.insert(serverSecrets).values({ name, value: box.seal(await create()) }).onConflictDoNothing();
  const [stored] = await db.select({ value: serverSecrets.value }).from(serverSecrets).where(eq(serverSecrets.name, name));
  if (!stored) throw new Error(`Server secret ${name} could not be stored`);
  return box.open(stored.value);
}
