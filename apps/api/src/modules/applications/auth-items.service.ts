import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { and, count, eq, inArray, sql } from 'drizzle-orm';
import { apiErrors, isKeyExpired, MAX_DOMAINS_PER_APPLICATION, MAX_KEYS_PER_APPLICATION, messages, normaliseIssuerUrl, normaliseOrigin, type PublicJwk } from '@latchkey/contract';
import type { Db } from '../../db/client.js';
import { applicationCorsDomains, applicationIssuers, applicationKeys } from '../../db/schema.js';
import { AppError, badRequest, conflict, notFound } from '../../errors.js';
import type { Issuers } from '../../lib/issuer-discovery.js';
import { isUniqueViolation } from '../../lib/unique-violation.js';
import { touchApplication } from './applications.service.js';
import { recordChange, type Change, type ChangeActor } from '../history/history.service.js';

/**
 * Keys, issuers and CORS domains are rows with primary keys: concurrent adds never lose one another, and
 * a duplicate surfaces as the unique violation, answered 409. The row, the application's version and the
 * history entry commit together.
 */
async function insertOnce(db: Db, applicationId: string, insert: (tx: Db) => Promise<unknown>, duplicate: string, change: Change) {
  try {
    await db.transaction(async (tx) => {
      await insert(tx);
      await touchApplication(tx, applicationId);
      await recordChange(tx, change);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(duplicate);
    throw err;
  }
}

/** Removes with `remove` (answering the removed rows); none removed is `missing` (404). */
async function removeOnce<T>(db: Db, applicationId: string, remove: (tx: Db) => Promise<T[]>, missing: string, change: (removed: T) => Change) {
  await db.transaction(async (tx) => {
    const [gone] = await remove(tx);
    if (gone === undefined) throw notFound(missing);
    await touchApplication(tx, applicationId);
    await recordChange(tx, change(gone));
  });
}

/** What the history keeps of a public key: enough to recognise it, not the key material. */
const keySummary = (jwk: PublicJwk) => ({ kid: jwk.kid, kty: jwk.kty, ...(jwk.crv ? { crv: jwk.crv } : {}), ...(jwk.alg ? { alg: jwk.alg } : {}), use: jwk.use ?? 'sig', ...(jwk.exp ? { exp: jwk.exp } : {}) });

/** node's names of the curves the contract allows. */
const NODE_CURVES: Record<string, string> = { 'P-256': 'prime256v1', 'P-384': 'secp384r1', 'P-521': 'secp521r1', secp256k1: 'secp256k1' };

/**
 * A key is stored only as the crypto library reads it: the contract's rules (RSA size and
 * exponent, EC point on its curve, Ed25519 not small-order, alg fitting the key) ran on the body, and the
 * same key imported here must say the same — a key the library refuses, or reads as something else, is
 * a 400. A key whose `exp` has passed could never verify anything and is refused too.
 */
export function assertUsableKey(key: PublicJwk, nowSeconds = Math.floor(Date.now() / 1000)): void {
  if (isKeyExpired(key, nowSeconds)) throw badRequest(messages.keyExpired);
  const { kty, crv, x, y, n, e } = key;
  let imported;
  try {
    imported = createPublicKey({ key: { kty, crv, x, y, n, e } as JsonWebKey, format: 'jwk' });
  } catch {
    throw badRequest(messages.keyInvalid);
  }
  const details = imported.asymmetricKeyDetails ?? {};
  const fits =
    kty === 'RSA'
      ? imported.asymmetricKeyType === 'rsa' &&
        (details.modulusLength ?? 0) >= 2048 &&
        (details.modulusLength ?? 0) <= 8192 &&
        (details.publicExponent ?? 0n) >= 3n &&
        (details.publicExponent ?? 0n) % 2n === 1n
      : kty === 'EC'
        ? imported.asymmetricKeyType === 'ec' && details.namedCurve === NODE_CURVES[crv ?? '']
        : imported.asymmetricKeyType === 'ed25519';
  if (!fits) throw badRequest(messages.keyInvalid);
}

export async function addKey(db: Db, applicationId: string, key: PublicJwk, by: ChangeActor): Promise<void> {
  assertUsableKey(key);
  const [{ n } = { n: 0 }] = await db.select({ n: count() }).from(applicationKeys).where(eq(applicationKeys.applicationId, applicationId));
  if (Number(n) >= MAX_KEYS_PER_APPLICATION) throw new AppError(409, apiErrors.tooManyKeys);
  const change: Change = { applicationId, actor: by, kind: 'key', subject: key.kid, changes: [{ field: 'authKeys', before: null, after: keySummary(key) }] };
  await insertOnce(db, applicationId, (tx) => tx.insert(applicationKeys).values({ applicationId, kid: key.kid, jwk: key }), apiErrors.keyExists, change);
}

export async function removeKey(db: Db, applicationId: string, kid: string, by: ChangeActor): Promise<void> {
  await removeOnce(
    db,
    applicationId,
    (tx) => tx.delete(applicationKeys).where(and(eq(applicationKeys.applicationId, applicationId), eq(applicationKeys.kid, kid))).returning({ jwk: applicationKeys.jwk }),
    apiErrors.keyNotFound,
    (gone) => ({ applicationId, actor: by, kind: 'key', subject: kid, changes: [{ field: 'authKeys', before: keySummary(gone.jwk), after: null }] }),
  );
}

/**
 * An auth domain is stored and compared in its RFC 3986 normal form (`normaliseIssuerUrl`:
 * lower-case scheme and host, no default port, normalised escapes, an empty path written as none), and a
 * token's `iss` is looked up in the same form (lib/third-party-tokens.ts), so `https://ID.example.com:443/`
 * is the issuer `https://id.example.com` — one registration, and the owner's tokens verify however their
 * `iss` writes it. Rows stored before (as given) are not rewritten; they are found by their normal form
 * here (`sameIssuer`) and by their exact text at verification.
 */
export const issuerOf = (url: string) => normaliseIssuerUrl(url) ?? url.trim();

/** The stored auth domains that are `issuer` (normal form) — its own row, or one stored before as written. */
async function sameIssuer(db: Db, issuer: string, applicationId?: string): Promise<string[]> {
  const host = URL.canParse(issuer) ? new URL(issuer).hostname : issuer;
  const pattern = `%${host.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const rows = await db
    .select({ url: applicationIssuers.url })
    .from(applicationIssuers)
    .where(and(sql`lower(${applicationIssuers.url}) like ${pattern}`, applicationId ? eq(applicationIssuers.applicationId, applicationId) : undefined));
  return rows.map((r) => r.url).filter((url) => issuerOf(url) === issuer);
}

export async function addIssuer(db: Db, issuers: Issuers, applicationId: string, url: string, by: ChangeActor, options: { discovery?: boolean } = {}): Promise<void> {
  const [{ n } = { n: 0 }] = await db.select({ n: count() }).from(applicationIssuers).where(eq(applicationIssuers.applicationId, applicationId));
  if (Number(n) >= MAX_DOMAINS_PER_APPLICATION) throw new AppError(409, apiErrors.tooManyDomains);
  const issuer = issuerOf(url);
  // A taken issuer (in any form) is refused before any call leaves; the insert below still decides a race.
  if ((await sameIssuer(db, issuer)).length > 0) throw conflict(apiErrors.issuerTaken);
  let discovered: Awaited<ReturnType<Issuers['discover']>> | null = null;
  if (options.discovery) discovered = await issuers.discover(issuer);
  const jwksUri = discovered?.config.jwksUri ?? null;
  const change: Change = {
    applicationId,
    actor: by,
    kind: 'issuer',
    changes: [{ field: 'authDomains', before: null, after: issuer }, ...(jwksUri ? [{ field: 'authDomainDiscovery', before: null, after: { jwksUri } }] : [])],
  };
  await insertOnce(db, applicationId, (tx) => tx.insert(applicationIssuers).values({ applicationId, url: issuer, jwksUri }), apiErrors.issuerTaken, change);
  if (discovered) {
    issuers.keys.prime(discovered.config.jwksUri, discovered.keySet);
    issuers.configs.prime(issuer, discovered.config);
  }
}

export async function removeIssuer(db: Db, issuers: Issuers, applicationId: string, url: string, by: ChangeActor): Promise<void> {
  let jwksUri: string | null = null;
  let removed = '';
  const issuer = issuerOf(url);
  await removeOnce(
    db,
    applicationId,
    async (tx) =>
      tx
        .delete(applicationIssuers)
        .where(and(eq(applicationIssuers.applicationId, applicationId), inArray(applicationIssuers.url, [issuer, ...(await sameIssuer(tx, issuer, applicationId))])))
        .returning({ url: applicationIssuers.url, jwksUri: applicationIssuers.jwksUri }),
    apiErrors.issuerNotFound,
    (gone) => {
      jwksUri = gone.jwksUri;
      removed = gone.url;
      return { applicationId, actor: by, kind: 'issuer', changes: [{ field: 'authDomains', before: gone.url, after: null }] };
    },
  );
  if (jwksUri) {
    issuers.keys.forget(jwksUri);
    issuers.configs.forget(removed);
  }
}

/** CORS domains are origins as browsers send them: `https://host[:port]`, lower-case, no path. */
export async function addCorsDomain(db: Db, applicationId: string, url: string, by: ChangeActor): Promise<void> {
  const [{ n } = { n: 0 }] = await db.select({ n: count() }).from(applicationCorsDomains).where(eq(applicationCorsDomains.applicationId, applicationId));
  if (Number(n) >= MAX_DOMAINS_PER_APPLICATION) throw new AppError(409, apiErrors.tooManyDomains);
  const origin = normaliseOrigin(url);
  const change: Change = { applicationId, actor: by, kind: 'cors', changes: [{ field: 'corsDomains', before: null, after: origin }] };
  await insertOnce(db, applicationId, (tx) => tx.insert(applicationCorsDomains).values({ applicationId, origin }), apiErrors.corsExists, change);
}

export async function removeCorsDomain(db: Db, applicationId: string, url: string, by: ChangeActor): Promise<void> {
  await removeOnce(
    db,
    applicationId,
    (tx) =>
      tx
        .delete(applicationCorsDomains)
        .where(and(eq(applicationCorsDomains.applicationId, applicationId), eq(applicationCorsDomains.origin, normaliseOrigin(url))))
        .returning({ origin: applicationCorsDomains.origin }),
    apiErrors.corsNotFound,
    (gone) => ({ applicationId, actor: by, kind: 'cors', changes: [{ field: 'corsDomains', before: gone.origin, after: null }] }),
  );
}
