import { generateKeyPairSync } from 'node:crypto';
import fc from 'fast-check';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers.js';
import { appUserToken, certify, createLock, createSandbox, execute, share, signJws, type KeyHolder } from '../fixtures/operations.js';

/**
 * Bad input for signed operations, generated: an otherwise random operation with at least one
 * defect (malformed JWS, wrong alg or typ, missing or foreign x5c, another key,
 * another lock's sub, a lifetime over 60 s, an unknown operation, a closed window or a missing location,
 * coordinates out of range, an unknown time zone …). Every one gets a 4xx `{code, message}`, never a
 * 5xx, and the database changes by rejected log entries only.
 */
const RUNS = Number(process.env.FUZZ_OPERATION_RUNS ?? 600);
let t: TestApp;
let lockId: string;
let closedLockId: string;
/** A lock alice administers: ADD_USER reaches its start and end there. */
let adminLockId: string;
let alice: KeyHolder;
let foreignChain: string[];
const otherKey = generateKeyPairSync('ed25519').privateKey;

async function snapshot(): Promise<{ tables: string; activity: { rejected: boolean; reason: string | null; repeats: number }[] }> {
  // The activity is compared on its own; the instance's heartbeat moves with the clock, whatever the requests do.
  const names = await t.database.db.execute(sql.raw(`select table_name from information_schema.tables where table_schema = 'public' and table_name not in ('lock_activity', 'instance_heartbeats') order by 1`));
  const tables: Record<string, string[]> = {};
  for (const { table_name } of rowsOf<{ table_name: string }>(names)) {
    tables[table_name] = rowsOf(await t.database.db.execute(sql.raw(`select * from "${table_name}"`))).map((r) => JSON.stringify(r)).sort();
  }
  const activity = rowsOf<{ rejected: boolean; reason: string | null; repeats: number }>(await t.database.db.execute(sql.raw('select rejected, reason, repeats from lock_activity')));
  return { tables: JSON.stringify(tables), activity };
}
function rowsOf<T>(result: unknown): T[] {
  return ((result as { rows?: T[] }).rows ?? (result as T[])) as T[];
}

beforeAll(async () => {
  t = await createTestApp();
  const sandbox = await createSandbox(t);
  lockId = await createLock(t, sandbox.applicationId);
  // Never open now (an hour, two hours from now), and only with a position close to the lock.
  const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16);
  const closed = { time: [{ start: hhmm(Date.now() + 7_200_000), end: hhmm(Date.now() + 10_800_000), timezone: 'UTC', days: ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'] }] };
  closedLockId = await createLock(t, sandbox.applicationId, { name: 'Closed', usageRequirements: closed });
  alice = await certify(t, await appUserToken(sandbox, 'fuzz-alice'));
  for (const lock of [lockId, closedLockId]) await share(t, lock, alice.userId);
  adminLockId = await createLock(t, sandbox.applicationId, { name: 'Admin' });
  await share(t, adminLockId, alice.userId, { role: 'ADMIN' });
  const other = await createTestApp();
  foreignChain = await other.app.platformCa.issue(alice.userId, alice.publicKey);
  await other.close();
});
afterAll(() => t?.close());

const now = () => Math.floor(Date.now() / 1000);
const junk = fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.constant(null), fc.jsonValue({ maxDepth: 2 }));
const validOperation = fc.constantFrom<Record<string, unknown>>(
  { type: 'MUTATE_LOCK', locked: false },
  { type: 'MUTATE_LOCK', locked: false, duration: 5 },
  { type: 'MUTATE_LOCK', locked: true },
);
type Defect = 'alg' | 'typ' | 'x5c' | 'key' | 'iss' | 'sub' | 'lifetime' | 'expired' | 'operation' | 'coordinates' | 'zone' | 'garbage' | 'closed' | 'tamper' | 'claimTime' | 'shareTime';
const defect = fc.constantFrom<Defect>('alg', 'typ', 'x5c', 'key', 'iss', 'sub', 'lifetime', 'expired', 'operation', 'coordinates', 'zone', 'garbage', 'closed', 'tamper', 'claimTime', 'shareTime');
/** Times a Date cannot hold (or no one means), in the claims and in ADD_USER's start and end. */
const EXTREME_TIMES = [9e15, -9e15, 1e300, 1e308, -1e308, Number.MAX_VALUE, Number.MAX_SAFE_INTEGER + 2, 253_402_300_800, -1];

const generated = fc.record({
  defect,
  alg: fc.oneof(fc.constantFrom('none', 'HS256', 'ES256', 'RS256', 'eddsa', ''), junk),
  typ: fc.oneof(fc.constantFrom('JOSE', 'jwt+x', 'JWS'), fc.integer()),
  x5c: fc.oneof(fc.constant(undefined), fc.constant([]), fc.constant('foreign'), fc.array(fc.string({ maxLength: 30 }), { maxLength: 3 }), junk),
  operation: fc.oneof(validOperation, fc.record({ type: fc.oneof(fc.string({ maxLength: 12 }), junk) }), junk),
  latitude: fc.oneof(fc.double({ min: 90.0001, max: 1e6, noNaN: true }), fc.double({ min: -1e6, max: -90.0001, noNaN: true })),
  zone: fc.constantFrom('Mars/Olympus_Mons', 'UTC+25', 'Europe/Atlantis', '', 'a'.repeat(80)),
  garbage: fc.oneof(fc.string({ maxLength: 300 }), fc.base64String({ maxLength: 200 }), fc.constant('a.b.c'), fc.constant('..'), fc.constant('e30.e30.')),
  encoding: fc.constantFrom('base64url' as const, 'base64' as const),
  contentType: fc.constantFrom('application/jwt', 'application/json'),
  jti: fc.oneof(fc.uuid(), fc.constant(undefined)),
  extremeTime: fc.constantFrom(...EXTREME_TIMES),
  timeClaim: fc.constantFrom('exp', 'nbf', 'iat', 'all', 'start', 'end', 'both'),
});

type Generated = typeof generated extends fc.Arbitrary<infer T> ? T : never;

function build(g: Generated): { url: string; body: string } {
  const target = g.defect === 'closed' ? closedLockId : g.defect === 'shareTime' ? adminLockId : lockId;
  if (g.defect === 'garbage') return { url: target, body: g.garbage };
  const header: Record<string, unknown> = { alg: 'EdDSA', typ: 'JWT', x5c: alice.chain };
  if (g.defect === 'alg') header.alg = g.alg;
  if (g.defect === 'typ') header.typ = g.typ;
  if (g.defect === 'x5c') header.x5c = g.x5c === 'foreign' ? foreignChain : g.x5c;
  const claims: Record<string, unknown> = { iss: alice.userId, sub: target, nbf: now(), iat: now(), exp: now() + 60, jti: g.jti ?? crypto.randomUUID(), operation: g.operation };
  if (!['operation', 'coordinates', 'zone'].includes(g.defect) && (typeof g.operation !== 'object' || g.operation === null || !('locked' in g.operation))) claims.operation = { type: 'MUTATE_LOCK', locked: false };
  if (g.defect === 'iss') claims.iss = crypto.randomUUID();
  if (g.defect === 'sub') claims.sub = target === lockId ? closedLockId : lockId;
  if (g.defect === 'lifetime') claims.exp = now() + 61 + Math.abs(Number(g.latitude) % 1000);
  if (g.defect === 'expired') Object.assign(claims, { nbf: now() - 600, iat: now() - 600, exp: now() - 560 });
  if (g.defect === 'operation') claims.operation = { type: `NOT_${String(g.alg)}`, locked: false };
  if (g.defect === 'coordinates') claims.location = { latitude: g.latitude, longitude: 0, accuracy: 5 };
  if (g.defect === 'zone') claims.operation = { type: 'MUTATE_SETTING', unlockBetween: { start: '08:00', end: '09:00', timezone: g.zone, days: ['MONDAY'] } };
  if (g.defect === 'claimTime') {
    const x = g.extremeTime;
    if (g.timeClaim === 'all') Object.assign(claims, { nbf: x, iat: x, exp: x });
    else if (g.timeClaim === 'exp' || g.timeClaim === 'nbf' || g.timeClaim === 'iat') claims[g.timeClaim] = x;
    else Object.assign(claims, { nbf: x - 30, iat: x - 30, exp: x });
  }
  if (g.defect === 'shareTime') {
    // Otherwise valid: alice is an admin of the lock and adds herself; only the bound is wrong.
    const bounds = g.timeClaim === 'start' ? { start: g.extremeTime } : g.timeClaim === 'end' ? { end: g.extremeTime } : { start: g.extremeTime, end: g.extremeTime === Number.MAX_VALUE ? Number.MAX_VALUE : g.extremeTime * 2 || 1 };
    claims.operation = { type: 'ADD_USER', user: alice.userId, role: 'ADMIN', ...bounds };
  }
  const jws = signJws(header, claims, g.defect === 'key' ? otherKey : alice.privateKey, g.encoding);
  if (g.defect !== 'tamper') return { url: target, body: jws };
  const [h, p, s] = jws.split('.');
  return { url: target, body: `${h}.${p!.slice(0, -2)}${p!.endsWith('A') ? 'B' : 'A'}${p!.slice(-1)}.${s}` };
}

describe('generated bad operations', () => {
  it(`answer ${RUNS} defective operations with a 4xx and a rejected log entry, and change nothing else`, async () => {
    const before = await snapshot();
    const problems: string[] = [];
    let logged = 0;
    let extreme = 0;
    const statuses = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(generated, async (g) => {
        const { url, body } = build(g);
        if (g.defect === 'claimTime' || g.defect === 'shareTime') extreme++;
        const res = await execute(t, url, alice.token, body, g.contentType);
        if (res.statusCode < 400 || res.statusCode >= 500) problems.push(`${g.defect} → ${res.statusCode} ${res.body.slice(0, 120)}`);
        const b = (res.body ? res.json() : {}) as { code?: unknown; message?: unknown };
        if (b.code !== res.statusCode || typeof b.message !== 'string' || b.message.length === 0) problems.push(`${g.defect}: body ${res.body.slice(0, 120)}`);
        if (res.statusCode !== 415) logged++;
        const key = `${res.statusCode} ${b.message as string}`.slice(0, 60);
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
        return true;
      }),
      { numRuns: RUNS, seed: 17 },
    );
    console.log(`bad operations: ${RUNS} requests (${extreme} with extreme times); ${[...statuses].map(([k, n]) => `${n}× ${k}`).join('; ')}`);
    const after = await snapshot();
    expect(problems.slice(0, 20)).toEqual([]);
    expect(extreme).toBeGreaterThanOrEqual(RUNS / 20);
    expect(after.tables).toBe(before.tables);
    // The same refusal again within a minute counts on its entry (repeats) instead of adding one.
    const counted = (rows: { repeats: number }[]) => rows.reduce((n, e) => n + Number(e.repeats), 0);
    expect(counted(after.activity) - counted(before.activity)).toBe(logged);
    expect(after.activity.length - before.activity.length).toBeLessThan(logged);
    expect(after.activity.every((e) => e.rejected && (e.reason ?? '').length > 0)).toBe(true);
  }, 300_000);
});
