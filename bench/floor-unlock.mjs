// The floor of a signed unlock: what no implementation can skip. Bare Fastify that reads a compact JWS,
// verifies its one Ed25519 signature, and makes one durable insert — group-committed: the inserts that
// arrive while one commit is in flight go together in the next transaction, as a database would do with its
// own commits. On the same database kind as the service (PGlite with a data directory, or PostgreSQL with
// DATABASE_URL). Run from apps/api so it uses the service's Fastify, pg and PGlite.
// argv: port, public key (SPKI DER base64).
import { createPublicKey, verify } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';

const [port, publicKeyDer] = process.argv.slice(2);
const publicKey = createPublicKey({ key: Buffer.from(publicKeyDer, 'base64'), format: 'der', type: 'spki' });

let query;
let closeDb;
let dataDir;
if (process.env.DATABASE_URL) {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 4 });
  query = (text, params) => pool.query(text, params);
  closeDb = () => pool.end();
} else {
  const { PGlite } = await import('@electric-sql/pglite');
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-floor-'));
  const db = await PGlite.create(dataDir);
  query = (text, params) => db.query(text, params);
  closeDb = () => db.close();
}
await query('create table if not exists floor_operations (id text primary key, at timestamptz not null default now())');

/** Inserts waiting for the next commit, and whether a commit is in flight. */
let waiting = [];
let committing = false;
async function commit() {
  committing = true;
  while (waiting.length) {
    const batch = waiting;
    waiting = [];
    const ids = batch.map((b) => b.id);
    try {
      await query('insert into floor_operations (id) select unnest($1::text[])', [ids]);
      for (const b of batch) b.resolve();
    } catch (error) {
      for (const b of batch) b.reject(error);
    }
  }
  committing = false;
}
const insert = (id) =>
  new Promise((resolve, reject) => {
    waiting.push({ id, resolve, reject });
    if (!committing) void commit();
  });

const app = Fastify({ logger: false });
app.addContentTypeParser('application/jwt', { parseAs: 'string' }, (_req, body, done) => done(null, body));
app.post('/execute', async (request, reply) => {
  const [head, body, signature] = String(request.body).split('.');
  if (!verify(null, Buffer.from(`${head}.${body}`), publicKey, Buffer.from(signature, 'base64url'))) return reply.code(403).send();
  const { jti } = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  await insert(jti);
  return reply.code(204).send();
});
await app.listen({ port: Number(port), host: '127.0.0.1' });
process.on('SIGTERM', async () => {
  await app.close();
  await closeDb();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  process.exit(0);
});
