import { randomUUID, webcrypto } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { operationErrors, type DeviceConfig } from '@latchkey/contract';
import { verifyOperation, type OperationContext } from './checks.js';
import { deviceRefusals } from './refusals.js';
import { ReplayCache } from './replay-cache.js';
import { configUser, createTestCa, issueLeaf, signJws, signOperation, testConfig, unlockClaims, type TestCa, type TestUser } from './test-fixture.js';

const LOCK = randomUUID();
let ca: TestCa;
let otherCa: TestCa;
let alice: TestUser;
let admin: TestUser;
let config: DeviceConfig;

beforeAll(async () => {
  [ca, otherCa] = await Promise.all([createTestCa(), createTestCa('CN=Someone Else CA')]);
  [alice, admin] = await Promise.all([issueLeaf(ca), issueLeaf(ca)]);
  config = testConfig(LOCK, [configUser(alice), configUser(admin, { role: 'ADMIN' })]);
});

function context(extra: Partial<OperationContext> = {}): OperationContext {
  return { config, lockId: LOCK, platformCa: ca.trust, now: Date.now(), replayCache: new ReplayCache(), ...extra };
}
const unlock = (user: TestUser = alice, extra: Record<string, unknown> = {}, nowMs = Date.now()) => signOperation(user, unlockClaims(user, LOCK, nowMs, extra));
const reasonOf = (jws: string, extra: Partial<OperationContext> = {}) => {
  const verdict = verifyOperation(jws, context(extra));
  return verdict.ok ? 'accepted' : verdict.reason;
};

describe('verifyOperation accepts', () => {
  it('an unlock by a user of the config, in base64url', () => {
    const verdict = verifyOperation(unlock(), context());
    expect(verdict).toMatchObject({ ok: true, operation: { type: 'MUTATE_LOCK', locked: false } });
  });

  it('the padded standard base64 that older SDKs send, the signature over the segments as they arrived', () => {
    const jws = signOperation(alice, unlockClaims(alice, LOCK), {}, 'base64');
    expect(jws).toMatch(/=/);
    expect(reasonOf(jws)).toBe('accepted');
  });

  it('a header naming its type `type` instead of typ, and a jti-less operation', () => {
    const claims = { ...unlockClaims(alice, LOCK), jti: undefined };
    expect(reasonOf(signJws({ alg: 'EdDSA', type: 'JWT', x5c: alice.chain }, claims, alice.privateKey))).toBe('accepted');
  });

  it('a location given beside the operation', () => {
    const ctx = context({ config: { ...config, usageRequirements: { location: { latitude: 52.52, longitude: 13.405, radius: 100, accuracy: 'MEDIUM', enabled: true } } } });
    const verdict = verifyOperation(unlock(alice, { location: { latitude: 52.5205, longitude: 13.405, accuracy: 20 } }), ctx);
    expect(verdict).toMatchObject({ ok: true, verified: { location: { latitude: 52.5205 } } });
  });
});

describe('verifyOperation refuses, with the reason', () => {
  it('what is not a compact JWS', () => {
    expect(reasonOf('not.a-jws')).toBe(operationErrors.malformed);
    expect(reasonOf('a.b.c!')).toBe(operationErrors.malformed);
    expect(reasonOf(`${'a'.repeat(40_000)}.b.c`)).toBe(operationErrors.malformed);
  });

  it('a header that is not a JSON object, or carries critical extensions', () => {
    expect(reasonOf(signJws('[1]', unlockClaims(alice, LOCK), alice.privateKey))).toBe(operationErrors.headerInvalid);
    expect(reasonOf(unlock(alice).replace(/^[^.]+/, Buffer.from(JSON.stringify({ alg: 'EdDSA', x5c: alice.chain, crit: ['b64'] })).toString('base64url')))).toBe(
      operationErrors.headerInvalid,
    );
  });

  it('another algorithm, or a type other than JWT', () => {
    expect(reasonOf(signOperation(alice, unlockClaims(alice, LOCK), { alg: 'HS256' }))).toBe(operationErrors.algorithm);
    expect(reasonOf(signOperation(alice, unlockClaims(alice, LOCK), { alg: undefined }))).toBe(operationErrors.algorithm);
    expect(reasonOf(signOperation(alice, unlockClaims(alice, LOCK), { typ: 'JOSE+JSON' }))).toBe(operationErrors.type);
  });

  it('no certificate chain, or one that is not base64 DER', () => {
    expect(reasonOf(signOperation(alice, unlockClaims(alice, LOCK), { x5c: undefined }))).toBe(operationErrors.x5cMissing);
    expect(reasonOf(signOperation(alice, unlockClaims(alice, LOCK), { x5c: [] }))).toBe(operationErrors.x5cMissing);
    expect(reasonOf(signOperation(alice, unlockClaims(alice, LOCK), { x5c: 'abc' }))).toBe(operationErrors.x5cInvalid);
    expect(reasonOf(signOperation(alice, unlockClaims(alice, LOCK), { x5c: ['a_b-c'] }))).toBe(operationErrors.x5cInvalid);
  });

  it('a chain that does not end at the platform CA', async () => {
    const stranger = await issueLeaf(otherCa, { userId: alice.userId });
    expect(reasonOf(unlock(stranger))).toBe(operationErrors.foreignChain);
    expect(reasonOf(signOperation(alice, unlockClaims(alice, LOCK), { x5c: [alice.chain[0], otherCa.base64] }))).toBe(operationErrors.foreignChain);
    expect(reasonOf(signOperation(alice, unlockClaims(alice, LOCK), { x5c: ['AAAA'] }))).toBe(operationErrors.foreignChain);
  });

  it('a leaf of the platform CA that names no user', async () => {
    const service = await issueLeaf(ca, { subject: 'CN=Latchkey config signer' });
    expect(reasonOf(signOperation(service, unlockClaims(alice, LOCK)))).toBe(operationErrors.foreignChain);
  });

  it('a certificate for a weak (small-order) Ed25519 key', async () => {
    const identity = new Uint8Array(32);
    identity[0] = 1;
    const weakKey = await webcrypto.subtle.importKey('raw', identity, { name: 'Ed25519' }, true, ['verify']);
    const weak = await issueLeaf(ca, { publicKey: weakKey as CryptoKey });
    expect(reasonOf(unlock(weak))).toBe(operationErrors.certificateKeyWeak);
  });

  it('a certificate outside its validity', async () => {
    const future = await issueLeaf(ca, { notBefore: Date.now() + 3_600_000, notAfter: Date.now() + 7_200_000 });
    const past = await issueLeaf(ca, { notBefore: Date.now() - 7_200_000, notAfter: Date.now() - 3_600_000 });
    expect(reasonOf(unlock(future))).toBe(operationErrors.certificateNotYetValid);
    expect(reasonOf(unlock(past))).toBe(operationErrors.certificateExpired);
  });

  it('a signature that does not match the leaf', () => {
    const jws = unlock();
    const tampered = jws.replace(/\.[^.]+\./, `.${Buffer.from(JSON.stringify(unlockClaims(admin, LOCK))).toString('base64url')}.`);
    expect(reasonOf(tampered)).toBe(operationErrors.signature);
    expect(reasonOf(signOperation({ ...alice, privateKey: admin.privateKey }, unlockClaims(alice, LOCK)))).toBe(operationErrors.signature);
    expect(reasonOf(`${jws.slice(0, jws.lastIndexOf('.'))}.AAAA`)).toBe(operationErrors.signature);
  });

  it('claims that are not a JSON object', () => {
    expect(reasonOf(signJws({ alg: 'EdDSA', x5c: alice.chain }, '"text"', alice.privateKey))).toBe(operationErrors.claimsInvalid);
  });

  it('an issuer other than the leaf’s user, a subject other than this lock', () => {
    expect(reasonOf(unlock(alice, { iss: admin.userId }))).toBe(operationErrors.issuer);
    expect(reasonOf(unlock(alice, { sub: randomUUID() }))).toBe(operationErrors.subject);
  });

  it('missing or impossible times, and times outside [nbf − 5 s, exp + 5 s]', () => {
    // Each is checked at the second its times are written against, however long signing takes.
    const now = Math.floor(Date.now() / 1000);
    const at = { now: now * 1000 };
    expect(reasonOf(unlock(alice, { exp: undefined }))).toBe(operationErrors.timesMissing);
    expect(reasonOf(unlock(alice, { nbf: undefined, iat: undefined }))).toBe(operationErrors.timesMissing);
    expect(reasonOf(unlock(alice, { exp: 1e308 }))).toBe(operationErrors.timesMissing);
    expect(reasonOf(unlock(alice, { nbf: now + 6, iat: now, exp: now + 30 }), at)).toBe(operationErrors.notYetValid);
    expect(reasonOf(unlock(alice, { nbf: now + 4, iat: now + 4, exp: now + 30 }), at)).toBe('accepted');
    expect(reasonOf(unlock(alice, { nbf: now - 40, iat: now - 40, exp: now - 5 }), at)).toBe(operationErrors.expired);
    expect(reasonOf(unlock(alice, { nbf: now - 40, iat: now - 40, exp: now - 4 }), at)).toBe('accepted');
  });

  it('a lifetime (exp − nbf, or exp − iat) over 60 s', () => {
    const now = Math.floor(Date.now() / 1000);
    expect(reasonOf(unlock(alice, { nbf: now, iat: now, exp: now + 61 }))).toBe(operationErrors.lifetime);
    expect(reasonOf(unlock(alice, { nbf: undefined, iat: now - 1, exp: now + 60 }))).toBe(operationErrors.lifetime);
    expect(reasonOf(unlock(alice, { nbf: now, iat: now, exp: now + 60 }))).toBe('accepted');
  });

  it('a jti that is not a short string', () => {
    expect(reasonOf(unlock(alice, { jti: 42 }))).toBe(operationErrors.jti);
    expect(reasonOf(unlock(alice, { jti: '' }))).toBe(operationErrors.jti);
    expect(reasonOf(unlock(alice, { jti: 'x'.repeat(201) }))).toBe(operationErrors.jti);
  });

  it('an unknown or invalid operation', () => {
    expect(reasonOf(unlock(alice, { operation: { type: 'OPEN_SESAME' } }))).toBe(operationErrors.unknownOperation);
    expect(reasonOf(unlock(alice, { operation: { type: 'MUTATE_LOCK', locked: 'no' } }))).toMatch(new RegExp(`^${operationErrors.operationInvalid}: `));
    expect(reasonOf(unlock(alice, { location: { latitude: 200, longitude: 0, accuracy: 1 } }))).toMatch(new RegExp(`^${operationErrors.operationInvalid}: `));
  });

  it('everything, before the platform has sent a config', () => {
    expect(reasonOf(unlock(), { config: null })).toBe(deviceRefusals.noConfig);
  });

  it('a user the config does not list', async () => {
    const bob = await issueLeaf(ca);
    expect(reasonOf(unlock(bob))).toBe(operationErrors.noAccess);
  });

  it('a user before their start or from their end on', () => {
    const now = Math.floor(Date.now() / 1000);
    const later = testConfig(LOCK, [configUser(alice, { start: now + 60 })]);
    const ended = testConfig(LOCK, [configUser(alice, { start: now - 60, end: now })]);
    const current = testConfig(LOCK, [configUser(alice, { start: now - 60, end: now + 60 })]);
    expect(reasonOf(unlock(), { config: later })).toBe(operationErrors.shareNotStarted);
    expect(reasonOf(unlock(), { config: ended })).toBe(operationErrors.shareEnded);
    expect(reasonOf(unlock(), { config: current })).toBe('accepted');
  });

  it('a certificate of the user issued before their certifiedAfter; one from that second on, and any without it, is accepted', async () => {
    const cutOff = Math.floor(Date.now() / 1000) - 1800;
    const earlier = await issueLeaf(ca, { userId: alice.userId, notBefore: (cutOff - 1) * 1000 });
    const later = await issueLeaf(ca, { userId: alice.userId, notBefore: cutOff * 1000 });
    const ended = testConfig(LOCK, [configUser(alice, { certifiedAfter: cutOff })]);
    expect(reasonOf(unlock(earlier), { config: ended })).toBe(operationErrors.certificateRevoked);
    expect(reasonOf(unlock(later), { config: ended })).toBe('accepted');
    expect(reasonOf(unlock(earlier), { config: testConfig(LOCK, [configUser(alice, { certifiedAfter: null })]) })).toBe('accepted');
    expect(reasonOf(unlock(earlier))).toBe('accepted');
  });

  it('a USER signing what only an ADMIN may do', () => {
    const share = { type: 'ADD_USER', user: randomUUID(), role: 'USER' };
    expect(reasonOf(unlock(alice, { operation: share }))).toBe(operationErrors.adminOnly);
    expect(reasonOf(unlock(alice, { operation: { type: 'REMOVE_USER', users: [randomUUID()] } }))).toBe(operationErrors.adminOnly);
    expect(reasonOf(unlock(alice, { operation: { type: 'MUTATE_SETTING', unlockDuration: 10 } }))).toBe(operationErrors.adminOnly);
    expect(reasonOf(unlock(alice, { operation: { type: 'BATCH_ADD_USER', users: [{ user: randomUUID() }] } }))).toBe(operationErrors.adminOnly);
    expect(reasonOf(unlock(admin, { operation: share }))).toBe('accepted');
    expect(reasonOf(unlock(alice, { operation: { type: 'MUTATE_LOCK', locked: true } }))).toBe('accepted');
  });

  it('the same operation a second time within two minutes, by its jti or its signature', () => {
    const replayCache = new ReplayCache();
    const now = Date.now();
    const jws = unlock(alice, {}, now);
    expect(reasonOf(jws, { replayCache, now })).toBe('accepted');
    expect(reasonOf(jws, { replayCache, now: now + 1000 })).toBe(operationErrors.replayed);
    // Another operation that reuses the jti is the same use.
    expect(reasonOf(unlock(alice, { jti: JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString()).jti }, now), { replayCache, now })).toBe(
      operationErrors.replayed,
    );
    const bare = signOperation(alice, { ...unlockClaims(alice, LOCK, now), jti: undefined });
    expect(reasonOf(bare, { replayCache, now })).toBe('accepted');
    expect(reasonOf(bare, { replayCache, now })).toBe(operationErrors.replayed);
  });

  it('a refused operation does not use up its jti', () => {
    const replayCache = new ReplayCache();
    const jws = unlock();
    expect(reasonOf(jws, { replayCache, config: null })).toBe(deviceRefusals.noConfig);
    expect(reasonOf(jws, { replayCache })).toBe('accepted');
  });
});

describe('verifyOperation names its reason’s catalogue key', () => {
  const refusalOf = (jws: string, extra: Partial<OperationContext> = {}) => {
    const verdict = verifyOperation(jws, context(extra));
    return verdict.ok ? 'accepted' : { reason: verdict.reason, reasonKey: verdict.reasonKey };
  };

  it('with each refusal the platform also makes, the reason the key’s text (with a detail after it, for some)', async () => {
    const now = Math.floor(Date.now() / 1000);
    const ended = testConfig(LOCK, [configUser(alice, { start: now - 60, end: now })]);
    const far = { ...config, usageRequirements: { location: { latitude: 0, longitude: 0, radius: 10, accuracy: 'LOW' as const, enabled: true } } };
    expect(refusalOf('not.a-jws')).toEqual({ reason: operationErrors.malformed, reasonKey: 'malformed' });
    expect(refusalOf(signOperation(alice, unlockClaims(alice, LOCK), { alg: 'HS256' }))).toEqual({ reason: operationErrors.algorithm, reasonKey: 'algorithm' });
    expect(refusalOf(unlock(alice, { sub: randomUUID() }))).toEqual({ reason: operationErrors.subject, reasonKey: 'subject' });
    expect(refusalOf(unlock(alice, { operation: { type: 'MUTATE_LOCK', locked: 'no' } }))).toEqual({
      reason: expect.stringMatching(new RegExp(`^${operationErrors.operationInvalid}: `)),
      reasonKey: 'operationInvalid',
    });
    expect(refusalOf(unlock(await issueLeaf(ca)))).toEqual({ reason: operationErrors.noAccess, reasonKey: 'noAccess' });
    expect(refusalOf(unlock(), { config: ended })).toEqual({ reason: operationErrors.shareEnded, reasonKey: 'shareEnded' });
    expect(refusalOf(unlock(alice, { location: { latitude: 1, longitude: 0, accuracy: 5 } }), { config: far })).toEqual({
      reason: expect.stringMatching(new RegExp(`^${operationErrors.locationTooFar} \\(`)),
      reasonKey: 'locationTooFar',
    });
    expect(refusalOf(unlock(alice, { operation: { type: 'REMOVE_USER', users: [randomUUID()] } }))).toEqual({ reason: operationErrors.adminOnly, reasonKey: 'adminOnly' });
  });

  it('and none with a reason only a lock gives', () => {
    expect(refusalOf(unlock(), { config: null })).toEqual({ reason: deviceRefusals.noConfig, reasonKey: undefined });
  });
});
