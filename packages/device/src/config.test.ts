import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { operationErrors } from '@latchkey/contract';
import { verifyConfig } from './checks.js';
import { deviceRefusals } from './refusals.js';
import { configUser, createTestCa, issueLeaf, signConfig, signJws, testConfig, type TestCa, type TestUser } from './test-fixture.js';

const LOCK = randomUUID();
let ca: TestCa;
let otherCa: TestCa;
let alice: TestUser;

beforeAll(async () => {
  [ca, otherCa] = await Promise.all([createTestCa(), createTestCa('CN=Someone Else CA')]);
  alice = await issueLeaf(ca);
});

const reasonOf = (jws: string, current = testConfig(LOCK, [], { version: 3 })) => {
  const verdict = verifyConfig(jws, { platformCa: ca.trust, lockId: LOCK, current });
  return verdict.ok ? 'accepted' : verdict.reason;
};

describe('verifyConfig', () => {
  it('accepts a config the platform CA signed, newer or the same version as the one held', () => {
    const config = testConfig(LOCK, [configUser(alice)], { version: 4, unlockTime: 8 });
    const verdict = verifyConfig(signConfig(ca, config), { platformCa: ca.trust, lockId: LOCK, current: testConfig(LOCK, [], { version: 3 }) });
    expect(verdict).toEqual({ ok: true, config });
    expect(reasonOf(signConfig(ca, testConfig(LOCK, [], { version: 3 })))).toBe('accepted');
    expect(verifyConfig(signConfig(ca, config), { platformCa: ca.trust, lockId: LOCK }).ok).toBe(true);
  });

  it('accepts one signed by a platform certificate that names no user, chained to the CA', async () => {
    const signer = await issueLeaf(ca, { subject: 'CN=Latchkey config signer, O=Latchkey' });
    expect(reasonOf(signJws({ alg: 'EdDSA', x5c: signer.chain }, testConfig(LOCK, [], { version: 5 }), signer.privateKey))).toBe('accepted');
  });

  it('ignores an older version', () => {
    expect(reasonOf(signConfig(ca, testConfig(LOCK, [], { version: 2 })))).toBe(`${deviceRefusals.configOlder} (version 2 < 3)`);
  });

  it('refuses what is not a compact JWS', () => {
    expect(reasonOf('{"lockId":"x"}')).toBe(deviceRefusals.configMalformed);
  });

  it('refuses another CA, a user’s leaf, and a bad header', () => {
    expect(reasonOf(signConfig(otherCa, testConfig(LOCK, [], { version: 9 })))).toBe(`${deviceRefusals.configChain}: ${operationErrors.foreignChain}`);
    expect(reasonOf(signJws({ alg: 'EdDSA', x5c: alice.chain }, testConfig(LOCK, [], { version: 9 }), alice.privateKey))).toBe(deviceRefusals.configChain);
    expect(reasonOf(signJws({ alg: 'RS256', x5c: [ca.base64] }, testConfig(LOCK, [], { version: 9 }), ca.privateKey))).toBe(
      `${deviceRefusals.configChain}: ${operationErrors.algorithm}`,
    );
    expect(reasonOf(signJws({ alg: 'EdDSA' }, testConfig(LOCK, [], { version: 9 }), ca.privateKey))).toBe(`${deviceRefusals.configChain}: ${operationErrors.x5cMissing}`);
  });

  it('refuses a signature that does not match', () => {
    expect(reasonOf(signJws({ alg: 'EdDSA', x5c: [ca.base64] }, testConfig(LOCK, [], { version: 9 }), otherCa.privateKey))).toBe(deviceRefusals.configSignature);
  });

  it('refuses a payload that is not a lock config, or a config for another lock', () => {
    expect(reasonOf(signJws({ alg: 'EdDSA', x5c: [ca.base64] }, { lockId: LOCK, version: 'new' }, ca.privateKey))).toMatch(new RegExp(`^${deviceRefusals.configInvalid}: `));
    expect(reasonOf(signConfig(ca, testConfig(randomUUID(), [], { version: 9 })))).toBe(deviceRefusals.configLock);
  });
});
