import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/helpers.js';
import { eq } from 'drizzle-orm';
import { serverSecrets } from '../db/schema.js';
import { SecretBox } from './secret-box.js';
import { loadOrCreateSharedSecret } from './server-secrets.js';

/** One migrated database for the file: each test keeps to secrets of its own names. */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

describe('server secrets', () => {
  let box: SecretBox;
  beforeAll(() => {
    box = new SecretBox(t.app.config.secretsEncryptionKey);
  });

  it('creates a secret once, however many callers race for it', async () => {
    let calls = 0;
    const create = () => `value-${++calls}`;
    const values = await Promise.all(Array.from({ length: 8 }, () => loadOrCreateSharedSecret(t.app.db, box, 'race-test', create)));
    expect(new Set(values).size).toBe(1);
    expect(values[0]).toMatch(/^value-\d$/);
    expect(await loadOrCreateSharedSecret(t.app.db, box, 'race-test', () => 'other')).toBe(values[0]);
  });

  it('keeps secrets of different names apart', async () => {
    expect(await loadOrCreateSharedSecret(t.app.db, box, 'a-secret', () => 'a')).toBe('a');
    expect(await loadOrCreateSharedSecret(t.app.db, box, 'b-secret', () => 'b')).toBe('b');
  });
});

describe('server secrets at rest', () => {
  const database = () => t.database;

  it('are sealed in the database when SECRETS_ENCRYPTION_KEY is set, and plain for the caller', async () => {
    const box = new SecretBox('k'.repeat(40));
    expect(await loadOrCreateSharedSecret(database().db, box, 'sealed', () => 'the-plain-value')).toBe('the-plain-value');
    const [row] = await database().db.select().from(serverSecrets).where(eq(serverSecrets.name, 'sealed'));
    expect(row!.value).not.toContain('the-plain-value');
    expect(row!.value).toMatch(/^enc:v1:/);
    expect(await loadOrCreateSharedSecret(database().db, box, 'sealed', () => 'other')).toBe('the-plain-value');
  });

  it('refuses to start with a wrong key or none, rather than use a different secret', async () => {
    await expect(loadOrCreateSharedSecret(database().db, new SecretBox('w'.repeat(40)), 'sealed', () => 'other')).rejects.toThrow(/cannot be decrypted/);
    await expect(loadOrCreateSharedSecret(database().db, new SecretBox(undefined), 'sealed', () => 'other')).rejects.toThrow(/SECRETS_ENCRYPTION_KEY is not set/);
  });
});
