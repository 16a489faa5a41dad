import { generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import type { CertificateResponse } from '@latchkey/contract';
import { and, desc, eq, isNull } from 'drizzle-orm';
import type { LockLogEntry } from '@latchkey/contract';
import { accountTokens, lockActivity, lockShares, locks } from '../../db/schema.js';
import type { TestApp } from '../../../test/helpers.js';
import { addIssuer, addKey, bearer, createApplication, createOwner, signUserToken, type SigningKey } from '../platform-users/test-fixtures.js';

/**
 * Test set-up for the lock user's side (issue 17): an owner with an application whose backend signs its
 * users' tokens, locks on it, and lock users holding an ephemeral key certified by /auth/certificate.
 */
export interface Sandbox {
  owner: Awaited<ReturnType<typeof createOwner>>;
  applicationId: string;
  issuer: string;
  key: SigningKey;
}

export async function createSandbox(t: TestApp): Promise<Sandbox> {
  const owner = await createOwner(t);
  const applicationId = await createApplication(t, owner.userId);
  const issuer = `https://id.${randomUUID().slice(0, 8)}.example`;
  await addIssuer(t, applicationId, issuer);
  const key = await addKey(t, applicationId, 'ES256');
  return { owner, applicationId, issuer, key };
}

export async function createLock(t: TestApp, applicationId: string, values: Partial<typeof locks.$inferInsert> = {}): Promise<string> {
  const [row] = await t.database.db.insert(locks).values({ applicationId, name: 'Front Door', ...values }).returning({ id: locks.id });
  return row!.id;
}

/** Shares a lock with an application user straight in the database (the owner's share routes are another module's). */
export async function share(t: TestApp, lockId: string, userId: string, values: Partial<typeof lockShares.$inferInsert> = {}): Promise<void> {
  const insert = t.database.db.insert(lockShares).values({ lockId, userId, ...values });
  await (Object.keys(values).length ? insert.onConflictDoUpdate({ target: [lockShares.lockId, lockShares.userId], set: values }) : insert.onConflictDoNothing());
}

export async function lockRow(t: TestApp, lockId: string) {
  const [row] = await t.database.db.select().from(locks).where(eq(locks.id, lockId));
  return row!;
}

/** The lock's log as its owner reads it, newest first. */
export async function logOf(t: TestApp, sandbox: Sandbox, lockId: string): Promise<LockLogEntry[]> {
  const res = await t.app.inject({ method: 'GET', url: `/api/platform/application/${sandbox.applicationId}/lock/${lockId}/log`, headers: bearer(sandbox.owner.token) });
  if (res.statusCode !== 200) throw new Error(`log: ${res.statusCode} ${res.body}`);
  return (res.json() as { items: LockLogEntry[] }).items;
}

export async function activityCount(t: TestApp, lockId: string): Promise<number> {
  return (await t.database.db.select({ id: lockActivity.id }).from(lockActivity).where(eq(lockActivity.lockId, lockId))).length;
}

/** A token the application's backend signs for one of its users. */
export function appUserToken(sandbox: Sandbox, sub: string, email = `${sub}@example.com`): Promise<string> {
  return signUserToken(sandbox.key, { iss: sandbox.issuer, sub, email, name: `User ${sub}` });
}

export interface KeyHolder {
  token: string;
  userId: string;
  chain: string[];
  privateKey: KeyObject;
  publicKey: KeyObject;
}

/** Registers a fresh Ed25519 key at /auth/certificate the way the JS SDK does (raw key, standard base64). */
export async function certify(t: TestApp, token: string): Promise<KeyHolder> {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(12);
  let res = await t.app.inject({ method: 'POST', url: '/api/auth/certificate', headers: bearer(token), payload: { ephemeralKey: raw.toString('base64') } });
  // A portal account's new key needs the emailed code (issue 29): the fixture reads it as its inbox would.
  if (res.statusCode === 423) res = await certifyWithCode(t, token, { privateKey, publicKey });
  if (res.statusCode !== 200) throw new Error(`certificate: ${res.statusCode} ${res.body}`);
  const body = res.json() as CertificateResponse;
  return { token, userId: body.userId, chain: body.certificateChain, privateKey, publicKey };
}

/** The code the last `POST /auth/certificate/verify` of this token's user emailed (read from its sealed row). */
export async function pendingKeyCode(t: TestApp, userId: string): Promise<string> {
  const [row] = await t.database.db
    .select({ sealed: accountTokens.sealedCode })
    .from(accountTokens)
    .where(and(eq(accountTokens.userId, userId), eq(accountTokens.purpose, 'key-verify'), isNull(accountTokens.usedAt)))
    .orderBy(desc(accountTokens.createdAt))
    .limit(1);
  if (!row?.sealed) throw new Error('no pending key code');
  return t.app.keyCodes.open(row.sealed);
}

/** The SDKs' second-factor flow: ask for a code for the key, sign it with the key, get the chain. */
export async function certifyWithCode(t: TestApp, token: string, keys: { privateKey: KeyObject; publicKey: KeyObject }) {
  const raw = keys.publicKey.export({ format: 'der', type: 'spki' }).subarray(12);
  const asked = await t.app.inject({ method: 'POST', url: '/api/auth/certificate/verify?method=EMAIL', headers: bearer(token), payload: { ephemeralKey: raw.toString('base64') } });
  if (asked.statusCode !== 200) throw new Error(`certificate/verify: ${asked.statusCode} ${asked.body}`);
  const userId = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).sub as string;
  const code = await pendingKeyCode(t, userId);
  const verificationSignature = sign(null, Buffer.from(code, 'utf8'), keys.privateKey).toString('base64');
  return t.app.inject({ method: 'POST', url: '/api/auth/certificate/check', headers: bearer(token), payload: { verificationSignature } });
}

export type Encoding = 'base64url' | 'base64';
const encode = (value: unknown, encoding: Encoding) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString(encoding);

/** A compact JWS over exactly the given header and claims, each segment in the given encoding. */
export function signJws(header: unknown, claims: unknown, privateKey: KeyObject, encoding: Encoding = 'base64url'): string {
  const input = `${encode(header, encoding)}.${encode(claims, encoding)}`;
  return `${input}.${sign(null, Buffer.from(input), privateKey).toString(encoding)}`;
}

export interface OperationOptions {
  jti?: string | null;
  iss?: string;
  sub?: string;
  nbf?: number;
  iat?: number;
  exp?: number;
  header?: Record<string, unknown>;
  x5c?: unknown;
  location?: unknown;
  encoding?: Encoding;
  privateKey?: KeyObject;
}

/** An operation as the current clients sign it: EdDSA, x5c, nbf = iat = now, exp = now + 60, a jti. */
export function signOperation(holder: KeyHolder, lockId: string, operation: unknown, o: OperationOptions = {}): string {
  const now = Math.floor(Date.now() / 1000);
  const header = o.header ?? { alg: 'EdDSA', typ: 'JWT', x5c: o.x5c ?? holder.chain };
  const claims: Record<string, unknown> = { iss: o.iss ?? holder.userId, sub: o.sub ?? lockId, nbf: o.nbf ?? now, iat: o.iat ?? now, exp: o.exp ?? now + 60, operation };
  if (o.jti !== null) claims.jti = o.jti ?? randomUUID();
  if (o.location !== undefined) claims.location = o.location;
  return signJws(header, claims, o.privateKey ?? holder.privateKey, o.encoding);
}

export function execute(t: TestApp, lockId: string, token: string, jws: string, contentType = 'application/jwt') {
  return t.app.inject({ method: 'POST', url: `/api/device/${lockId}/execute`, headers: { ...bearer(token), 'content-type': contentType }, payload: jws });
}
