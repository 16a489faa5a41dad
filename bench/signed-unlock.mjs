#!/usr/bin/env node
// Signed unlocks: POST /device/{lockId}/execute with pre-signed, unique operations at 64
// connections, against bare Fastify in paired rounds (lib.mjs), on PGlite and, with BENCH_DATABASE_URL or
// TEST_DATABASE_URL, on Postgres. Budget: ≥ 0.35× bare Fastify's req/s with p99 ≤ 20 ms.
// Run alone (`node bench/signed-unlock.mjs`) or from run.mjs, which prints its rows in the table.
import { execSync } from 'node:child_process';
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { api, load, median, paired, root, scratchDatabase, seedOwner, startBareFastify, startService } from './lib.mjs';

const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const pgAdminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
const BUDGET_RATIO = 0.35;
const BUDGET_P99_MS = 20;

if (!fs.existsSync(path.join(root, 'apps/api/dist/main.js'))) execSync('npm run build -w @latchkey/api --silent', { cwd: root, stdio: 'inherit' });

/** The sandbox as a developer sets it up: their key and issuer, an application user, the Front Door shared. */
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
  return { userToken, lockId, cert, privateKey: keys.privateKey };
}

/** `count` unlocks signed ahead of the round, each with its own jti (valid 60 s, so signed per round). */
function presign({ lockId, cert, privateKey }, count) {
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

export async function unlockRound(base, sandbox, expectedRps, duration) {
  const bodies = presign(sandbox, Math.ceil(Math.max(expectedRps, 4000) * duration * 2.5));
  let next = 0;
  const r = await load({
    url: `${base}/api/device/${sandbox.lockId}/execute`,
    method: 'POST',
    duration,
    headers: { authorization: `Bearer ${sandbox.userToken}`, 'content-type': 'application/jwt' },
    requests: [{ setupRequest: (req) => ({ ...req, body: bodies[next++ % bodies.length] }) }],
  });
  return { ...r, used: next, signed: bodies.length };
}


/** Rows for the bench table: [section, metric, value, budget, verdict]. */
export async function benchSignedUnlock({ loadBare }) {
  const rows = [];
  const modes = [{ name: 'pglite', env: {} }, ...(pgAdminUrl ? [{ name: 'postgres', env: null }] : [])];
  for (const mode of modes) {
    const scratch = mode.name === 'postgres' ? await scratchDatabase(pgAdminUrl) : null;
    const svc = await startService(scratch ? { DATABASE_URL: scratch.url } : mode.env);
    try {
      const sandbox = await setUp(svc.url);
      const warm = await unlockRound(svc.url, sandbox, 20_000, 3);
      const rounds = (await paired(loadBare, () => unlockRound(svc.url, sandbox, warm.rps, DURATION))).map(([b, r]) => ({ ...r, ratio: r.rps / b.rps }));
      const failed = rounds.reduce((n, r) => n + r.non2xx + r.errors, 0);
      const reused = rounds.some((r) => r.used > r.signed);
      if (failed || reused) rows.push([mode.name, 'signed unlock errors', `${failed} non-2xx or errors${reused ? ' (ran out of pre-signed operations)' : ''}`, '', '']);
      const ratio = median(rounds.map((r) => r.ratio));
      const p99 = median(rounds.map((r) => r.p99));
      const range = rounds.map((r) => r.ratio);
      rows.push([mode.name, 'signed unlock req/s (× bare)', `${median(rounds.map((r) => r.rps)).toFixed(0)} (${ratio.toFixed(2)}×; rounds ${Math.min(...range).toFixed(2)}–${Math.max(...range).toFixed(2)}×)`, `≥ ${BUDGET_RATIO}×`, ratio >= BUDGET_RATIO ? 'met' : 'NOT met']);
      rows.push([mode.name, 'signed unlock p50 · p99 @64', `${median(rounds.map((r) => r.p50)).toFixed(2)} · ${p99.toFixed(2)} ms (worst round ${Math.max(...rounds.map((r) => r.p99)).toFixed(2)} ms)`, `p99 ≤ ${BUDGET_P99_MS} ms`, p99 <= BUDGET_P99_MS ? 'met' : 'NOT met']);
    } finally {
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
