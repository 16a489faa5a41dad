import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operationErrors } from '@latchkey/contract';
import { createDatabase } from '../../db/client.js';
import { usedOperationIds } from '../../db/schema.js';
import { PlatformCa } from '../../plugins/platform-ca.js';
import { SecretBox } from '../../lib/secret-box.js';
import { OperationRefusal } from '../../lib/operation-outcome.js';
import { OperationVerifier } from '../../lib/operation-token.js';
import { createTestApp, type TestApp } from '../../../test/helpers.js';
import { appUserToken, certify, createLock, createSandbox, execute, lockRow, logOf, share, signJws, signOperation, type KeyHolder, type Sandbox } from '../../../test/fixtures/operations.js';

/**
 * Bad input for signed operations: every malformed or forged one gets a clear 4xx
 * `{code, message}` and a rejected log entry with that reason, and changes nothing else.
 */
let t: TestApp;
let sandbox: Sandbox;
let lockId: string;
let otherLockId: string;
let alice: KeyHolder;
let bob: KeyHolder;
let foreignChain: string[];
let expiredChain: string[];
const UNLOCK = { type: 'MUTATE_LOCK', locked: false };
const now = () => Math.floor(Date.now() / 1000);
const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

beforeAll(async () => {
  t = await createTestApp();
  sandbox = await createSandbox(t);
  lockId = await createLock(t, sandbox.applicationId);
  otherLockId = await createLock(t, sandbox.applicationId, { name: 'Back Door' });
  alice = await certify(t, await appUserToken(sandbox, 'alice'));
  bob = await certify(t, await appUserToken(sandbox, 'bob'));
  for (const holder of [alice, bob]) for (const lock of [lockId, otherLockId]) await share(t, lock, holder.userId);
  // Another CA, as a second deployment would have: it signs a leaf for alice's very key and id.
  const elsewhere = await createDatabase({});
  await elsewhere.migrate();
  foreignChain = await (await PlatformCa.load(elsewhere.db, new SecretBox(undefined))).issue(alice.userId, alice.publicKey);
  await elsewhere.close();
  expiredChain = await t.app.platformCa.issue(alice.userId, alice.publicKey, Date.now() - 31 * 86_400_000);
});
afterAll(() => t?.close());

const headerWith = (fields: Record<string, unknown>) => ({ alg: 'EdDSA', typ: 'JWT', x5c: alice.chain, ...fields });
const claims = (fields: Record<string, unknown> = {}) => ({ iss: alice.userId, sub: lockId, nbf: now(), iat: now(), exp: now() + 60, jti: crypto.randomUUID(), operation: UNLOCK, ...fields });
const signed = (header: unknown, body: unknown) => signJws(header, body, alice.privateKey);

interface Case {
  name: string;
  jws: () => string;
  status: number;
  message: string;
  token?: () => string;
}

const cases: Case[] = [
  { name: 'not a JWS', jws: () => 'not-a-jws', status: 400, message: operationErrors.malformed },
  { name: 'five parts (a JWE)', jws: () => 'a.b.c.d.e', status: 400, message: operationErrors.malformed },
  { name: 'characters outside base64', jws: () => `${b64(headerWith({}))}.${b64(claims())}.sig!`, status: 400, message: operationErrors.malformed },
  { name: 'a header that is not JSON', jws: () => signed('not json', claims()), status: 400, message: operationErrors.headerInvalid },
  { name: 'alg none', jws: () => `${b64(headerWith({ alg: 'none' }))}.${b64(claims())}.`, status: 400, message: operationErrors.malformed },
  { name: 'alg HS256', jws: () => signed(headerWith({ alg: 'HS256' }), claims()), status: 400, message: operationErrors.algorithm },
  { name: 'alg ES256', jws: () => signed(headerWith({ alg: 'ES256' }), claims()), status: 400, message: operationErrors.algorithm },
  { name: 'no alg', jws: () => signed({ typ: 'JWT', x5c: alice.chain }, claims()), status: 400, message: operationErrors.algorithm },
  { name: 'typ JOSE', jws: () => signed(headerWith({ typ: 'JOSE' }), claims()), status: 400, message: operationErrors.type },
  { name: 'type (the SDK spelling) not JWT', jws: () => signed(headerWith({ type: 'JWE' }), claims()), status: 400, message: operationErrors.type },
  { name: 'a critical extension', jws: () => signed(headerWith({ crit: ['exp'] }), claims()), status: 400, message: operationErrors.headerInvalid },
  { name: 'no x5c', jws: () => signed({ alg: 'EdDSA', typ: 'JWT' }, claims()), status: 400, message: operationErrors.x5cMissing },
  { name: 'x5c a string', jws: () => signed(headerWith({ x5c: alice.chain[0] }), claims()), status: 400, message: operationErrors.x5cInvalid },
  { name: 'x5c not base64', jws: () => signed(headerWith({ x5c: ['%%%'] }), claims()), status: 400, message: operationErrors.x5cInvalid },
  { name: 'x5c not a certificate', jws: () => signed(headerWith({ x5c: ['AAAA'] }), claims()), status: 403, message: operationErrors.foreignChain },
  { name: 'a chain to another CA', jws: () => signed(headerWith({ x5c: foreignChain }), claims()), status: 403, message: operationErrors.foreignChain },
  { name: 'our leaf under another CA', jws: () => signed(headerWith({ x5c: [alice.chain[0], foreignChain[1]] }), claims()), status: 403, message: operationErrors.foreignChain },
  { name: 'a key that is not the leaf', jws: () => signJws(headerWith({}), claims(), generateKeyPairSync('ed25519').privateKey), status: 403, message: operationErrors.signature },
  { name: 'a tampered payload', jws: () => { const [h, , s] = signed(headerWith({}), claims()).split('.'); return `${h}.${b64(claims({ operation: { ...UNLOCK, duration: 60 } }))}.${s}`; }, status: 403, message: operationErrors.signature },
  { name: 'an expired certificate', jws: () => signed(headerWith({ x5c: expiredChain }), claims()), status: 403, message: operationErrors.certificateExpired },
  { name: 'claims that are not JSON', jws: () => signed(headerWith({}), 'nope'), status: 400, message: operationErrors.claimsInvalid },
  { name: "another user's id as iss", jws: () => signed(headerWith({}), claims({ iss: bob.userId })), status: 403, message: operationErrors.issuer },
  { name: "bob's own operation under alice's token", jws: () => signOperation(bob, lockId, UNLOCK), status: 403, message: operationErrors.caller },
  { name: 'sub of another lock', jws: () => signed(headerWith({}), claims({ sub: otherLockId })), status: 403, message: operationErrors.subject },
  { name: 'a lifetime over 60 s', jws: () => signed(headerWith({}), claims({ exp: now() + 61 })), status: 403, message: operationErrors.lifetime },
  { name: 'an expired operation', jws: () => signed(headerWith({}), claims({ nbf: now() - 120, iat: now() - 120, exp: now() - 60 })), status: 403, message: operationErrors.expired },
  { name: 'nbf in the future', jws: () => signed(headerWith({}), claims({ nbf: now() + 30, iat: now() + 30, exp: now() + 60 })), status: 403, message: operationErrors.notYetValid },
  { name: 'no exp', jws: () => signed(headerWith({}), claims({ exp: undefined })), status: 400, message: operationErrors.timesMissing },
  { name: 'exp as text', jws: () => signed(headerWith({}), claims({ exp: String(now() + 30) })), status: 400, message: operationErrors.timesMissing },
  { name: 'a jti that is a number', jws: () => signed(headerWith({}), claims({ jti: 7 })), status: 400, message: operationErrors.jti },
  { name: 'an unknown operation', jws: () => signed(headerWith({}), claims({ operation: { type: 'SELF_DESTRUCT' } })), status: 400, message: operationErrors.unknownOperation },
  { name: 'no operation', jws: () => signed(headerWith({}), claims({ operation: undefined })), status: 400, message: operationErrors.unknownOperation },
  { name: 'MUTATE_LOCK without locked', jws: () => signed(headerWith({}), claims({ operation: { type: 'MUTATE_LOCK' } })), status: 400, message: `${operationErrors.operationInvalid}: ` },
  { name: 'a duration over 60 s', jws: () => signed(headerWith({}), claims({ operation: { ...UNLOCK, duration: 3600 } })), status: 400, message: `${operationErrors.operationInvalid}: ${operationErrors.durationRange}` },
  { name: 'a latitude out of range', jws: () => signed(headerWith({}), claims({ location: { latitude: 91, longitude: 0, accuracy: 5 } })), status: 400, message: `${operationErrors.operationInvalid}: The latitude must be between -90 and 90` },
  { name: 'a longitude out of range', jws: () => signed(headerWith({}), claims({ operation: { ...UNLOCK, location: { latitude: 0, longitude: 181, accuracy: 5 } } })), status: 400, message: `${operationErrors.operationInvalid}: The longitude must be between -180 and 180` },
  {
    name: 'an unknown time zone',
    jws: () => signed(headerWith({}), claims({ operation: { type: 'MUTATE_SETTING', unlockBetween: { start: '08:00', end: '09:00', timezone: 'Mars/Olympus_Mons', days: ['MONDAY'] } } })),
    status: 400,
    message: `${operationErrors.operationInvalid}: Not a known time zone (use an IANA name such as Europe/London)`,
  },
];

const spentIds = async () => (await t.database.db.select({ id: usedOperationIds.id }).from(usedOperationIds)).length;
/** Refusals the lock's log stands for: an identical refusal within a minute counts on the entry already there. */
const refusalsLogged = async () =>
  ((await t.database.executeSql(`select coalesce(sum(repeats), 0)::int as n from lock_activity where lock_id = $1 and rejected`, [lockId])).rows[0] as { n: number }).n;

describe('a refused operation', () => {
  it.each(cases)('$name → $status with its reason, logged, nothing else changed', async (c) => {
    const [lockBefore, spentBefore, logBefore, refusalsBefore] = [await lockRow(t, lockId), await spentIds(), await logOf(t, sandbox, lockId), await refusalsLogged()];
    const res = await execute(t, lockId, c.token?.() ?? alice.token, c.jws());
    expect(res.statusCode).toBe(c.status);
    const body = res.json() as { code: number; message: string };
    expect(body.code).toBe(c.status);
    expect(body.message.startsWith(c.message)).toBe(true);
    const log = await logOf(t, sandbox, lockId);
    // A new entry, or (the same reason as an earlier case's, within the minute) counted on that entry.
    expect(await refusalsLogged()).toBe(refusalsBefore + 1);
    expect(log.length - logBefore.length).toBeLessThanOrEqual(1);
    expect(log.find((e) => e.reason === body.message)).toMatchObject({ rejected: true, actor: { userId: alice.userId } });
    expect(await lockRow(t, lockId)).toEqual(lockBefore);
    expect(await spentIds()).toBe(spentBefore);
  });

  it('is of the kind its check decided, with a detail after the reason too', () => {
    const verifier = new OperationVerifier(t.app.platformCa);
    const kindOf = (jws: string) => {
      try {
        verifier.verify(jws, lockId, alice.userId);
        return 'accepted';
      } catch (error) {
        if (error instanceof OperationRefusal) return error.kind;
        throw error;
      }
    };
    expect(kindOf('not-a-jws')).toBe('malformed');
    expect(kindOf(signed(headerWith({}), claims({ exp: now() + 61 })))).toBe('lifetime');
    expect(kindOf(signed(headerWith({}), claims({ operation: { type: 'SELF_DESTRUCT' } })))).toBe('unknownOperation');
    expect(kindOf(signed(headerWith({}), claims({ operation: { ...UNLOCK, duration: 3600 } })))).toBe('operationInvalid');
    expect(kindOf(signed(headerWith({}), claims({ location: { latitude: 91, longitude: 0, accuracy: 5 } })))).toBe('operationInvalid');
    expect(kindOf(signed(headerWith({}), claims()))).toBe('accepted');
  });

  it('still accepts a good operation after all of them', async () => {
    expect((await execute(t, lockId, alice.token, signOperation(alice, lockId, UNLOCK))).statusCode).toBe(204);
  });
});
