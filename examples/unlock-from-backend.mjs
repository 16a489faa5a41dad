#!/usr/bin/env node
// Unlock a Latchkey sandbox lock from your own backend, in three calls. Needs Node 20+ and `npm install jose`.
//
//   LATCHKEY_API=http://localhost:3000/api \
//   KEY_FILE=./my-signing-key.json \            # your private key: a JWK (with its kid) or a PKCS#8 PEM
//   KEY_ID=my-key-1 \                           # the kid you uploaded in the portal (read from a JWK when unset)
//   ISSUER=https://auth.example.com \           # an auth domain registered on your application
//   USER_EMAIL=alice@example.com \              # the user the Front Door is shared with (the portal's Locks tab)
//   node examples/unlock-from-backend.mjs
//
// Optional: USER_ID (your id for that user, default: the email), LOCK_ID (default: the lock named
// LOCK_NAME, "Front Door"), AUDIENCE (the platform audience, default: the one
// the server names at GET /api/config, its public URL unless configured), ALG
// (for a PEM key: ES256 unless set).
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { CompactSign, SignJWT, importJWK, importPKCS8 } from 'jose';

const env = process.env;
const api = (env.LATCHKEY_API ?? 'http://localhost:3000/api').replace(/\/+$/, '');
const required = (name) => env[name] || fail(`Set ${name} (see the top of this file).`);

function fail(message) {
  console.error(message);
  process.exit(1);
}

/** Your signing key, and the algorithm that fits it. */
async function loadSigningKey() {
  const text = readFileSync(required('KEY_FILE'), 'utf8').trim();
  if (text.startsWith('{')) {
    const jwk = JSON.parse(text);
    const alg = jwk.alg ?? { RSA: 'RS256', OKP: 'EdDSA' }[jwk.kty] ?? { 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512' }[jwk.crv];
    return { key: await importJWK(jwk, alg), alg, kid: env.KEY_ID ?? jwk.kid };
  }
  const alg = env.ALG ?? 'ES256';
  return { key: await importPKCS8(text, alg), alg, kid: required('KEY_ID') };
}

/** 1. Your backend vouches for its user: a short-lived token signed with your key. */
async function userToken() {
  const { key, alg, kid } = await loadSigningKey();
  const audience = env.AUDIENCE ?? (await platformAudience());
  if (!kid) fail('Set KEY_ID: the kid of the key you uploaded in the portal.');
  const email = required('USER_EMAIL');
  return new SignJWT({ email })
    .setProtectedHeader({ alg, kid, typ: 'JWT' })
    .setIssuer(required('ISSUER'))
    .setAudience(audience)
    .setSubject(env.USER_ID ?? email)
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(key);
}

/** The audience this deployment expects in your tokens (the portal shows it on the Authentication card). */
async function platformAudience() {
  const res = await fetch(`${api}/config`);
  if (!res.ok) fail(`GET /config → ${res.status}: set AUDIENCE to the audience the portal shows.`);
  return (await res.json()).platformAudience;
}

async function call(method, path, token, body, contentType = 'application/json') {
  const res = await fetch(`${api}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': contentType }) },
    body: body === undefined ? undefined : contentType === 'application/json' ? JSON.stringify(body) : body,
  });
  const text = await res.text();
  if (!res.ok) fail(`${method} ${path} → ${res.status}: ${text}`);
  return text ? JSON.parse(text) : null;
}

const token = await userToken();

// 2. Find the lock, then register a fresh Ed25519 key: the platform certifies it for this user.
const locks = await call('GET', '/device/mine', token);
const lock = env.LOCK_ID ? locks.find((l) => l.id === env.LOCK_ID) : locks.find((l) => l.name === (env.LOCK_NAME ?? 'Front Door'));
if (!lock) fail(`No such lock is shared with ${env.USER_EMAIL}. Share it with this email on the portal's Locks tab.`);
const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const rawPublicKey = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
const { certificateChain, userId } = await call('POST', '/auth/certificate', token, { ephemeralKey: rawPublicKey.toString('base64') });

// 3. Sign the unlock with that key (valid for 60 s, usable once) and send it.
const now = Math.floor(Date.now() / 1000);
const operation = { iss: userId, sub: lock.id, nbf: now, iat: now, exp: now + 60, jti: randomUUID(), operation: { type: 'MUTATE_LOCK', locked: false } };
const jws = await new CompactSign(Buffer.from(JSON.stringify(operation)))
  .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', x5c: certificateChain })
  .sign(privateKey);
await call('POST', `/device/${lock.id}/execute`, token, jws, 'application/jwt');

console.log(`Unlocked ${lock.name} (${lock.id}) for ${lock.settings.unlockTime} s.`);
