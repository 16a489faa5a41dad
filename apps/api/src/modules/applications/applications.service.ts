import { eq, sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import {
  apiErrors,
  applicationListSchema,
  applicationSchema,
  type Application,
  type CreateApplication,
  type EmailPreferencesUpdate,
  type HistoryKind,
  type Language,
  type PublicJwk,
  type UpdateApplication,
} from '@latchkey/contract';
import type { Db } from '../../db/client.js';
import {
  applicationCorsDomains,
  applicationIssuers,
  applicationKeys,
  applicationOwners,
  applications,
  locks,
} from '../../db/schema.js';
import { notFound } from '../../errors.js';
import { checkLogoUrl } from '../logos/logos.service.js';
import { addFrontDoor } from '../locks/locks.service.js';
import { unbindDevicesOfLocks } from '../devices/unbind.service.js';
import { accessTags, type AccessCache } from '../../lib/access-cache.js';
import { ApplicationBodyCache } from './application-cache.js';
import { recordChange, type Change, type ChangeActor } from '../history/history.service.js';
import { historyFields, updateWithHistory } from './application-update.js';

export { historyFields, updateWithHistory };

type ApplicationRow = typeof applications.$inferSelect;

/**
 * The child rows of each application, aggregated by the database in the same statement as the
 * application itself: one round trip per read instead of five (measured in docs/performance.md).
 */
const childColumns = {
  keys: sql<{ kid: string; jwk: PublicJwk }[]>`coalesce((select json_agg(json_build_object('kid', k.kid, 'jwk', k.jwk) order by k.created_at, k.kid) from ${applicationKeys} k where k.application_id = ${applications.id}), '[]'::json)`,
  issuers: sql<{ url: string; jwksUri: string | null }[]>`coalesce((select json_agg(json_build_object('url', i.url, 'jwksUri', i.jwks_uri) order by i.created_at, i.url) from ${applicationIssuers} i where i.application_id = ${applications.id}), '[]'::json)`,
  cors: sql<string[]>`coalesce((select json_agg(c.origin order by c.created_at, c.origin) from ${applicationCorsDomains} c where c.application_id = ${applications.id}), '[]'::json)`,
  owners: sql<string[]>`coalesce((select json_agg(o.user_id order by o.created_at, o.user_id) from ${applicationOwners} o where o.application_id = ${applications.id}), '[]'::json)`,
};
type AssembledRow = { app: ApplicationRow; keys: { kid: string; jwk: PublicJwk }[]; issuers: { url: string; jwksUri: string | null }[]; cors: string[]; owners: string[] };

/** The two reads every portal screen makes, prepared once per database (no SQL building per request). */
function prepareReads(db: Db) {
  return {
    get: db
      .select({ app: applications, ...childColumns })
      .from(applications)
      .where(eq(applications.id, sql.placeholder('applicationId')))
      .limit(1)
      .prepare('application_get'),
    list: db
      .select({ app: applications, ...childColumns })
      .from(applications)
      .innerJoin(applicationOwners, eq(applicationOwners.applicationId, applications.id))
      .where(eq(applicationOwners.userId, sql.placeholder('userId')))
      .orderBy(applications.createdAt, applications.id)
      .prepare('application_list'),
  };
}
/**
 * One app's application reads (app.applicationReads): its prepared statements, made on first use, and
 * its cache of encoded application bodies. Another app in the process has its own.
 */
export class ApplicationReads {
  private prepared: ReturnType<typeof prepareReads> | undefined;
  readonly bodies = new ApplicationBodyCache();

  constructor(readonly db: Db) {}

  statements(): ReturnType<typeof prepareReads> {
    return (this.prepared ??= prepareReads(this.db));
  }
}

/** Aggregated rows → the contract's Application. */
function assemble(rows: AssembledRow[]): Application[] {
  return rows.map(({ app: r, keys, issuers, cors, owners }) => {
    const authKeys: Record<string, PublicJwk> = {};
    for (const k of keys) authKeys[k.kid] = k.jwk;
    const authDomainDiscovery: Record<string, { jwksUri: string }> = {};
    for (const i of issuers) if (i.jwksUri) authDomainDiscovery[i.url] = { jwksUri: i.jwksUri };
    return {
      applicationId: r.id,
      name: r.name,
      companyName: r.companyName,
      mailingAddress: r.mailingAddress,
      owners,
      logoUrl: r.logoUrl,
      privacyPolicy: r.privacyPolicy,
      supportContact: r.supportContact,
      appLink: r.appLink,
      authDomains: issuers.map((i) => i.url),
      corsDomains: cors,
      authKeys,
      authDomainDiscovery,
      emailPreferences: {
        senderEmail: r.senderEmail,
        senderName: r.senderName,
        primaryColour: r.primaryColour,
        secondaryColour: r.secondaryColour,
        onlySendEssentialEmails: r.onlySendEssentialEmails,
        callToAction: r.callToAction ?? null,
      },
      lastUpdated: Math.floor(r.updatedAt.getTime() / 1000),
    };
  });
}

async function listApplications(reads: ApplicationReads, userId: string): Promise<Application[]> {
  return assemble(await reads.statements().list.execute({ userId }));
}

/**
 * GET application (the caller's list) as JSON text. The access cache keeps it per user, tagged with the
 * user and every listed application, so a change to any of them, or to the user's ownerships, drops it.
 * A cached list is returned as it is, not in a promise, so the route can send it in the same tick.
 */
export function listApplicationsJson(reads: ApplicationReads, cache: AccessCache, userId: string): string | Promise<string> {
  const key = `l|${userId}`;
  const cached = cache.get<string>(key);
  if (cached !== undefined) return cached;
  const mark = cache.mark();
  return listApplications(reads, userId).then((list) => {
    const body = JSON.stringify(z.encode(applicationListSchema, list));
    cache.set(key, body, [accessTags.user(userId), ...list.map((a) => accessTags.application(a.applicationId))], mark);
    return body;
  });
}

async function getApplication(reads: ApplicationReads, applicationId: string): Promise<Application> {
  const [app] = assemble(await reads.statements().get.execute({ applicationId }));
  if (!app) throw notFound(apiErrors.applicationNotFound);
  return app;
}

/**
 * GET application/{id} as JSON text, encoded with the contract's schema exactly as the route's serializer
 * would. `version` is the one the auth statement read with the ownership check; while it holds, the body
 * comes from this instance's cache (one statement per read instead of two, and no re-encoding), returned
 * as it is, not in a promise, so the route can send it in the same tick.
 */
export function getApplicationJson(reads: ApplicationReads, applicationId: string, version: number | null): string | Promise<string> {
  const cache = reads.bodies;
  const cached = version === null ? undefined : cache.get(applicationId, version);
  if (cached !== undefined) return cached;
  return getApplication(reads, applicationId).then((app) => {
    const body = JSON.stringify(z.encode(applicationSchema, app));
    if (version !== null) cache.set(applicationId, version, body);
    return body;
  });
}

/** Column values of an update: absent members stay as they are; `null` clears optional ones. */
function columnsOf(input: UpdateApplication): Partial<typeof applications.$inferInsert> {
  const set: Partial<typeof applications.$inferInsert> = {};
  for (const key of ['name', 'companyName', 'mailingAddress', 'privacyPolicy', 'supportContact', 'appLink', 'logoUrl'] as const) {
    if (input[key] !== undefined) (set as Record<string, unknown>)[key] = input[key];
  }
  const prefs: EmailPreferencesUpdate = input.emailPreferences ?? {};
  for (const key of ['senderEmail', 'senderName', 'primaryColour', 'secondaryColour', 'onlySendEssentialEmails', 'callToAction'] as const) {
    if (prefs[key] !== undefined) (set as Record<string, unknown>)[key] = prefs[key];
  }
  return set;
}

/** The history entries of a write of `set` over `before` (empty for a new application): one per kind. */
function historyOf(applicationId: string, actor: ChangeActor, before: Partial<ApplicationRow>, set: Partial<typeof applications.$inferInsert>): Change[] {
  const byKind = new Map<HistoryKind, Change>();
  for (const [column, after] of Object.entries(set)) {
    const known = historyFields[column];
    if (!known) continue;
    const was = (before as Record<string, unknown>)[column] ?? null;
    if (JSON.stringify(was) === JSON.stringify(after ?? null)) continue;
    const [field, kind] = known;
    let entry = byKind.get(kind);
    if (!entry) byKind.set(kind, (entry = { applicationId, actor, kind, changes: [] }));
    entry.changes.push({ field, before: was, after: after ?? null });
  }
  return [...byKind.values()];
}

export async function createApplication(app: FastifyInstance, user: ChangeActor & { id: string }, input: CreateApplication, language: Language = 'en'): Promise<string> {
  const id = crypto.randomUUID();
  if (input.logoUrl) await checkLogoUrl(app.storage, id, input.logoUrl);
  const values = { name: input.name, companyName: input.companyName, mailingAddress: input.mailingAddress, ...columnsOf(input) };
  await app.db.transaction(async (tx) => {
    await tx.insert(applications).values({ id, ...values });
    await tx.insert(applicationOwners).values({ applicationId: id, userId: user.id });
    // The sandbox: every application starts with one virtual lock, so an owner can try an unlock before owning hardware.
    await addFrontDoor(tx, id, language);
    await recordChange(tx, ...historyOf(id, user, {}, values));
  });
  return id;
}

/**
 * Partial update. Only the given columns are written, so owners editing different fields at the same
 * time never overwrite each other; the history entry and the application.updated event are written by
 * the same statement (application-update.ts, the history trigger). An update with nothing to change changes nothing.
 */
export async function updateApplication(app: FastifyInstance, applicationId: string, input: UpdateApplication, by: ChangeActor): Promise<void> {
  const set = columnsOf(input);
  if (Object.keys(set).length === 0) return;
  if (set.logoUrl) await checkLogoUrl(app.storage, applicationId, set.logoUrl);
  if (!(await updateWithHistory(app.db, applicationId, set, by))) throw notFound(apiErrors.applicationNotFound);
}

/**
 * Deletes the application. The devices of its locks are unbound first, as "Unbind" does (certificates
 * revoked in the same transaction); answers their ids, which the caller cuts off (`forgetDevice`) once committed.
 */
export async function deleteApplication(db: Db, applicationId: string): Promise<string[]> {
  return db.transaction(async (tx) => {
    const unbound = await unbindDevicesOfLocks(tx, eq(locks.applicationId, applicationId));
    await tx.delete(applications).where(eq(applications.id, applicationId));
    return unbound;
  });
}

/** Keys, issuers, CORS domains and owners live in rows of their own; their changes still bump the version. */
export async function touchApplication(db: Db, applicationId: string): Promise<void> {
  await db
    .update(applications)
    .set({ version: sql`${applications.version} + 1`, updatedAt: sql`now()` })
    .where(eq(applications.id, applicationId));
}
