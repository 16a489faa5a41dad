import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { sql } from 'drizzle-orm';
import { apiErrors } from '@latchkey/contract';
import { buildApp } from '../app.js';
import { loadConfig } from '../config.js';
import { users } from '../db/schema.js';
import { createTestApp, uniqueEmail, type TestApp } from '../../test/helpers.js';
import { describeStatement, serializeError } from './errors.js';

/**
 * A failing query is logged by what failed — statement keyword and hash, PostgreSQL
 * code, constraint — never with the statement's text or its parameter values. Read from the real log of
 * a real app on the test database.
 */
let t: TestApp;
let app: FastifyInstance;
const logged: string[] = [];
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-errors-log-'));
const SECRET = 'not-a-uuid-secret-7f3a';
const TAKEN = uniqueEmail('taken-secret');

beforeAll(async () => {
  t = await createTestApp();
  await t.database.db.insert(users).values({ email: TAKEN, passwordHash: 'x' });
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'warn', PUBLIC_URL: 'http://localhost:3000' });
  app = await buildApp(config, { database: t.database, logStream: { write: (line) => void logged.push(line) } });
  // Two statements that fail inside PostgreSQL with a parameter the message or detail would quote.
  app.get('/api/test/bad-cast', async () => app.db.execute(sql`select id from users where id = ${SECRET}::uuid and email = ${'second-' + SECRET}`));
  app.get('/api/test/duplicate', async () => app.db.insert(users).values({ email: TAKEN, passwordHash: `hash-${SECRET}` }));
  await app.ready();
});
afterAll(async () => {
  await app?.close();
  await t?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const entries = () => logged.map((line) => JSON.parse(line) as { level: number; msg: string; err?: Record<string, unknown> });

describe('database errors in the log', () => {
  it('names the statement and the PostgreSQL code, never the statement text or a parameter value', async () => {
    for (const url of ['/api/test/bad-cast', '/api/test/duplicate']) {
      const res = await app.inject({ url });
      expect(res.statusCode).toBe(500);
      expect(res.json()).toEqual({ code: 500, message: apiErrors.internal });
    }
    const errors = entries().filter((e) => e.msg === 'unhandled error');
    expect(errors).toHaveLength(2);
    const all = logged.join('\n');
    for (const value of [SECRET, TAKEN, 'second-', 'hash-', 'where id =', 'insert into']) expect(all).not.toContain(value);

    const [cast, duplicate] = errors.map((e) => e.err!);
    expect(cast).toMatchObject({ message: 'Failed query', statement: expect.stringMatching(/^select #[0-9a-f]{10}$/), paramCount: 2 });
    expect(cast!.cause).toMatchObject({ code: '22P02' });
    expect(duplicate).toMatchObject({ statement: expect.stringMatching(/^insert #[0-9a-f]{10}$/) });
    expect(duplicate!.cause).toMatchObject({ code: '23505', constraint: 'users_email_key' });
    expect(String(cast!.stack)).toMatch(/^DrizzleQueryError: Failed query\n\s+at /);
  });
});

describe('serializeError', () => {
  it('leaves other errors to pino’s standard serializer', () => {
    const err = Object.assign(new Error('plain failure'), { statusCode: 418 });
    expect(serializeError(err)).toMatchObject({ type: 'Error', message: 'plain failure', statusCode: 418, stack: expect.stringContaining('plain failure') });
  });

  it('hides a wrapped database error under an error of the service', () => {
    const db = Object.assign(new Error('invalid input syntax for type uuid: "secret-value"'), { code: '22P02', severity: 'ERROR', detail: 'secret-detail' });
    const wrapped = serializeError(new Error('could not load', { cause: db }));
    expect(JSON.stringify(wrapped)).not.toMatch(/secret/);
    expect(wrapped).toMatchObject({ message: 'could not load', cause: { code: '22P02', message: 'invalid input syntax for type uuid: "…"' } });
  });

  it('describes a statement by its first keyword and a hash of its text', () => {
    expect(describeStatement('  (select 1)')).toMatch(/^select #[0-9a-f]{10}$/);
    expect(describeStatement('update "users" set x = $1')).not.toBe(describeStatement('update "users" set x = $2'));
  });
});
