import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../test/helpers.js';
import { eq } from 'drizzle-orm';
import { createDatabase, type Database } from '../db/client.js';
import { serverSecrets } from '../db/schema.js';
import { SecretBox } from './secret-box.js';
import { loadOrCreateSecret, useSecretBox } from './server-secrets.js';

describe('server secrets', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('creates a secret once, however many callers race for it', async () => {
    let calls = 0;
    const create = () => `value-${++calls}`;
    const values = await Promise.all(Array.from({ length: 8 }, () => loadOrCreateSecret(t.app.db, 'race-test', create)));
    expect(new Set(values).size).toBe(1);
    expect(values[0]).toMatch(/^value-\d$/);
    expect(await loadOrCreateSecret(t.app.db, 'race-test', () => 'other')).toBe(values[0]);
  });

  it('keeps secrets of different names apart', async () => {
    expect(await loadOrCreateSecret(t.app.db, 'a-secret', () => 'a')).toBe('a');
    expect(await loadOrCreateSecret(t.app.db, 'b-secret', () => 'b')).toBe('b');
  });
});

describe('server secrets at rest', () => {
  let database: Database;
  beforeAll(async () => {
    database = await createDatabase({});
    await database.migrate();
  });
  afterAll(() => database.close());

  it('are sealed in the database when SECRETS_ENCRYPTION_KEY is set, and plain for the caller', async () => {
    useSecretBox(database.db, new SecretBox('k'.repeat(40)));
    expect(await loadOrCreateSecret(database.db, 'sealed', () => 'the-plain-value')).toBe('the-plain-value');
    const [row] = await database.db.select().from(serverSecrets).where(eq(serverSecrets.name, 'sealed'));
    expect(row!.value).not.toContain('the-plain-value');
    expect(row!.value).toMatch(/^enc:v1:/);
    expect(await loadOrCreateSecret(database.db, 'sealed', () => 'other')).toBe('the-plain-value');
  });

  it('refuses to start with a wrong key or none, rather than use a different secret', async () => {
    useSecretBox(database.db, new SecretBox('w'.repeat(40)));
    await expect(loadOrCreateSecret(database.db, 'sealed', () => 'other')).rejects.toThrow(/cannot be decrypted/);
    useSecretBox(database.db, new SecretBox(undefined));
    await expect(loadOrCreateSecret(database.db, 'sealed', () => 'other')).rejects.toThrow(/SECRETS_ENCRYPTION_KEY is not set/);
  });
});
