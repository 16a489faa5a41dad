import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { and, count, eq } from 'drizzle-orm';
import { apiErrors, isKeyExpired, MAX_DOMAINS_PER_APPLICATION, MAX_KEYS_PER_APPLICATION, messages, normaliseOrigin, type PublicJwk } from '@latchkey/contract';
import type { Db } from '../../db/client.js';
import { applicationCorsDomains, applicationIssuers, applicationKeys } from '../../db/schema.js';
import { AppError, badRequest, conflict, notFound } from '../../errors.js';
import { discoverIssuer, issuerConfigs } from '../../lib/issuer-discovery.js';
import { issuerKeys } from '../../lib/issuer-keys.js';
import { isUniqueViolation, touchApplication } from './applications.service.js';
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

/** node's names of the curves the contract allows (issue 26). */
const NODE_CURVES: Record<string, string> = { 'P-256': 'prime256v1', 'P-384': 'secp384r1', 'P-521': 'secp521r1', secp256k1: 'secp256k1' };

/**
 * A key is stored only as the crypto library reads it (issue 26): the contract's rules (RSA size and
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
 * Issuers are stored exactly as given (trimmed): token verification compares `iss` byte for byte, so
 * rewriting them (a trailing slash, letter case) would make the owner's own tokens fail.
 */
export async function addIssuer(db: Db, applicationId: string, url: string, by: ChangeActor, options: { discovery?: boolean } = {}): Promise<void> {
  const [{ n } = { n: 0 }] = await db.select({ n: count() }).from(applicationIssuers).where(eq(applicationIssuers.applicationId, applicationId));
  if (Number(n) >= MAX_DOMAINS_PER_APPLICATION) throw new AppError(409, apiErrors.tooManyDomains);
  const issuer = url.trim();
  let discovered: Awaited<ReturnType<typeof discoverIssuer>> | null = null;
  if (options.discovery) {
    // A taken issuer is refused before any call leaves; the insert below still decides a race.
    const [taken] = await db.select({ url: applicationIssuers.url }).from(applicationIssuers).where(eq(applicationIssuers.url, issuer)).limit(1);
    if (taken) throw conflict(apiErrors.issuerTaken);
    discovered = await discoverIssuer(issuer);
  }
  const jwksUri = discovered?.config.jwksUri ?? null;
  const change: Change = {
    applicationId,
    actor: by,
    kind: 'issuer',
    changes: [{ field: 'authDomains', before: null, after: issuer }, ...(jwksUri ? [{ field: 'authDomainDiscovery', before: null, after: { jwksUri } }] : [])],
  };
  await insertOnce(db, applicationId, (tx) => tx.insert(applicationIssuers).values({ applicationId, url: issuer, jwksUri }), apiErrors.issuerTaken, change);
  if (discovered) {
    issuerKeys.prime(discovered.config.jwksUri, discovered.keySet);
    issuerConfigs.prime(issuer, discovered.config);
  }
}

export async function removeIssuer(db: Db, applicationId: string, url: string, by: ChangeActor): Promise<void> {
  let jwksUri: string | null = null;
  await removeOnce(
    db,
    applicationId,
    (tx) =>
      tx
        .delete(applicationIssuers)
        .where(and(eq(applicationIssuers.applicationId, applicationId), eq(applicationIssuers.url, url.trim())))
        .returning({ url: applicationIssuers.url, jwksUri: applicationIssuers.jwksUri }),
    apiErrors.issuerNotFound,
    (gone) => {
      jwksUri = gone.jwksUri;
      return { applicationId, actor: by, kind: 'issuer', changes: [{ field: 'authDomains', before: gone.url, after: null }] };
    },
  );
  if (jwksUri) {
    issuerKeys.forget(jwksUri);
    issuerConfigs.forget(url.trim());
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
