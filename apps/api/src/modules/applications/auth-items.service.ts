import { and, count, eq } from 'drizzle-orm';
import { apiErrors, MAX_DOMAINS_PER_APPLICATION, MAX_KEYS_PER_APPLICATION, normaliseOrigin, type PublicJwk } from '@latchkey/contract';
import type { Db } from '../../db/client.js';
import { applicationCorsDomains, applicationIssuers, applicationKeys } from '../../db/schema.js';
import { AppError, conflict, notFound } from '../../errors.js';
import { isUniqueViolation, touchApplication } from './applications.service.js';

/**
 * Keys, issuers and CORS domains are rows with primary keys: concurrent adds never lose one another, and
 * a duplicate surfaces as the unique violation, answered 409.
 */
async function insertOnce(db: Db, applicationId: string, insert: () => Promise<unknown>, duplicate: string) {
  try {
    await insert();
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(duplicate);
    throw err;
  }
  await touchApplication(db, applicationId);
}

export async function addKey(db: Db, applicationId: string, key: PublicJwk): Promise<void> {
  const [{ n } = { n: 0 }] = await db.select({ n: count() }).from(applicationKeys).where(eq(applicationKeys.applicationId, applicationId));
  if (Number(n) >= MAX_KEYS_PER_APPLICATION) throw new AppError(409, apiErrors.tooManyKeys);
  await insertOnce(db, applicationId, () => db.insert(applicationKeys).values({ applicationId, kid: key.kid, jwk: key }), apiErrors.keyExists);
}

export async function removeKey(db: Db, applicationId: string, kid: string): Promise<void> {
  const gone = await db
    .delete(applicationKeys)
    .where(and(eq(applicationKeys.applicationId, applicationId), eq(applicationKeys.kid, kid)))
    .returning({ kid: applicationKeys.kid });
  if (gone.length === 0) throw notFound(apiErrors.keyNotFound);
  await touchApplication(db, applicationId);
}

/**
 * Issuers are stored exactly as given (trimmed): token verification compares `iss` byte for byte, so
 * rewriting them (a trailing slash, letter case) would make the owner's own tokens fail.
 */
export async function addIssuer(db: Db, applicationId: string, url: string): Promise<void> {
  const [{ n } = { n: 0 }] = await db.select({ n: count() }).from(applicationIssuers).where(eq(applicationIssuers.applicationId, applicationId));
  if (Number(n) >= MAX_DOMAINS_PER_APPLICATION) throw new AppError(409, apiErrors.tooManyDomains);
  await insertOnce(db, applicationId, () => db.insert(applicationIssuers).values({ applicationId, url: url.trim() }), apiErrors.issuerTaken);
}

export async function removeIssuer(db: Db, applicationId: string, url: string): Promise<void> {
  const gone = await db
    .delete(applicationIssuers)
    .where(and(eq(applicationIssuers.applicationId, applicationId), eq(applicationIssuers.url, url.trim())))
    .returning({ url: applicationIssuers.url });
  if (gone.length === 0) throw notFound(apiErrors.issuerNotFound);
  await touchApplication(db, applicationId);
}

/** CORS domains are origins as browsers send them: `https://host[:port]`, lower-case, no path. */
export async function addCorsDomain(db: Db, applicationId: string, url: string): Promise<void> {
  const [{ n } = { n: 0 }] = await db.select({ n: count() }).from(applicationCorsDomains).where(eq(applicationCorsDomains.applicationId, applicationId));
  if (Number(n) >= MAX_DOMAINS_PER_APPLICATION) throw new AppError(409, apiErrors.tooManyDomains);
  const origin = normaliseOrigin(url);
  await insertOnce(db, applicationId, () => db.insert(applicationCorsDomains).values({ applicationId, origin }), apiErrors.corsExists);
}

export async function removeCorsDomain(db: Db, applicationId: string, url: string): Promise<void> {
  const gone = await db
    .delete(applicationCorsDomains)
    .where(and(eq(applicationCorsDomains.applicationId, applicationId), eq(applicationCorsDomains.origin, normaliseOrigin(url))))
    .returning({ origin: applicationCorsDomains.origin });
  if (gone.length === 0) throw notFound(apiErrors.corsNotFound);
  await touchApplication(db, applicationId);
}
