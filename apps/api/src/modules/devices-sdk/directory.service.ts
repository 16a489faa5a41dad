import { and, desc, eq, inArray, isNotNull, sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { apiErrors, emailLimitErrors, sdkErrors, type BatchUserPublicKey, type DirectoryLookup, type Language, isUuid } from '@latchkey/contract';
import type { Db } from '../../db/client.js';
import { applicationUsers, users } from '../../db/schema.js';
import { AppError, notFound } from '../../errors.js';
import type { LockUser } from '../../plugins/lock-user-auth.js';
import { holdsLiveShare, sendShareEmail } from '../shares/shares.service.js';

/**
 * Finding people to share with, as the platform's SDKs do: POST /share/invite/{email} and POST
 * /directory/query. Always within the caller's application (an application user's); a portal token looks
 * among portal accounts, as the portal's own directory look-up always did. Nothing answers for a user of
 * another application.
 */

/**
 * What the SDKs read as the user's public key. The platform keeps no per-user key: operations are checked
 * against the certificate chain (/auth/certificate), and the key an ADD_USER carries is accepted and not
 * used. The SDKs still need a key to parse (the JVM SDK reads it as an RSA public key, `toRsaPublicKey`),
 * so every user answers with this one: the DER SPKI of an RSA-2048 key whose private half was discarded.
 */
export const DIRECTORY_PUBLIC_KEY =
  'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAlR6xTInnNQHImjZ/Id/LPCXxiZoMOB6ZEmyJaqVRtAgaF9tijjYZ8Qum4FxuEom3r1qLu6UDCOHfLZhdYROfkI66DHaMa1+45C8x3y45hBjp8Rar1AKQrS8p27B4d4zchKEa0+CGemfsHrCs/iVCZNb6GhEjvpze0Ma0cFMSMMTgALyE5sjStez081ORRW6J6tItXw5d9Ci5yu0a+wlZ3J+iQyd8qGt2rdaAo0HF2KqvNrMlUmo6RSFLXEhrGrqjKpTtM6vDq6jnRnbXpnRw3ZxxQIWk4M2R6EGRTjLX5Nxh1ROIP83ganDTrCutgvUy4KFLc+ImQtg1rVb+tX6J0QIDAQAB';

type AppUser = typeof applicationUsers.$inferSelect;

/** The application's user with this email: the most recently seen active one, else the pending one. */
async function appUserByEmail(db: Db, applicationId: string, email: string): Promise<AppUser | null> {
  const [found] = await db
    .select()
    .from(applicationUsers)
    .where(and(eq(applicationUsers.applicationId, applicationId), sql`lower(${applicationUsers.email}) = ${email.toLowerCase()}`))
    .orderBy(sql`${applicationUsers.sub} is null`, sql`${applicationUsers.lastSeenAt} desc nulls last`, desc(applicationUsers.createdAt))
    .limit(1);
  return found ?? null;
}

/**
 * POST /share/invite/{email}?visitor=: the user's id and key. An email the application does not know yet
 * gets a pending user (the same one a share by email makes, claimed by that person's first token) and
 * the application's branded invitation, kept in its Outbox. `visitor` is accepted: the invitation is the
 * same either way. Portal tokens look among portal accounts (404 when there is none).
 * Inviting someone new takes an admin — a user holding an ADMIN share in force of one of the application's
 * locks (403 otherwise) — and is charged to the application (its owners' allowance while none of them has
 * a verified address, and its hourly limit): a 429 then, and nobody is made.
 */
export async function inviteByEmail(app: FastifyInstance, user: LockUser, email: string, language?: Language): Promise<{ id: string; publicKey: string }> {
  const address = email.toLowerCase();
  if (user.kind === 'portal') return { id: (await portalUser(app.db, address)).id, publicKey: DIRECTORY_PUBLIC_KEY };
  const applicationId = user.applicationId!;
  const known = await appUserByEmail(app.db, applicationId, address);
  if (known) return { id: known.id, publicKey: DIRECTORY_PUBLIC_KEY };
  if (!(await holdsLiveShare(app.db, user, { role: 'ADMIN', begun: true }))) throw new AppError(403, emailLimitErrors.inviteNeedsAdmin);
  await app.chargeEmail({ applicationId, keyEmail: true });
  const [created] = await app.db.insert(applicationUsers).values({ applicationId, email: address, status: 'pending' }).onConflictDoNothing().returning();
  const pending = created ?? (await appUserByEmail(app.db, applicationId, address));
  if (!pending) throw notFound(sdkErrors.userNotFound);
  // Sent once, when the pending user is made; a share of a lock to them (ADD_USER) sends nothing more.
  if (created) {
    await sendShareEmail(app, {
      applicationId,
      lockName: '',
      to: address,
      invitation: true,
      expiresAt: new Date(Date.now() + app.config.inviteTtl * 1000),
      recipientName: null,
      language,
    });
  }
  return { id: pending.id, publicKey: DIRECTORY_PUBLIC_KEY };
}

async function portalUser(db: Db, email: string) {
  const [found] = await db.select({ id: users.id, email: users.email }).from(users).where(eq(users.email, email)).limit(1);
  if (!found) throw notFound(apiErrors.userNotFound);
  return found;
}

const KINDS = ['email', 'telephone', 'localKey', 'foreignKey', 'identity'] as const;
type Kind = (typeof KINDS)[number];

/** How many names a look-up asks about (each one counts against the caller's directory budget). */
export function lookupSize(query: DirectoryLookup): number {
  const kind = KINDS.find((k) => query[k] != null)!;
  const value = query[kind];
  return Array.isArray(value) ? value.length : 1;
}

/**
 * POST /directory/query. v1 (one value): `{id, publicKey}`, or 404. v2 (a list, as the SDK's batch
 * look-ups send with `Accept: …api-v2+json`): the users found, in the order asked, each once.
 * `localKey` is the user's id (what the JavaScript SDK's getUser by id sends), `foreignKey` the
 * application's own id for the user (its token's `sub`); the platform knows no telephone numbers and no
 * `identity` tokens, so those find no one.
 */
export async function lookupDirectory(db: Db, user: LockUser, query: DirectoryLookup): Promise<{ id: string; publicKey: string } | BatchUserPublicKey[]> {
  const kind = KINDS.find((k) => query[k] != null)! as Kind;
  const raw = query[kind]!;
  const values = (Array.isArray(raw) ? raw : [raw]).map((v) => v.trim());
  const found = await find(db, user, kind, values);
  if (!Array.isArray(raw)) {
    const one = found[0];
    // By email: the portal's own message for it, which its owners dialog shows.
    if (!one) throw notFound(kind === 'email' ? apiErrors.userNotFound : sdkErrors.userNotFound);
    return { id: one.id, publicKey: one.publicKey };
  }
  return found;
}

async function find(db: Db, user: LockUser, kind: Kind, values: string[]): Promise<BatchUserPublicKey[]> {
  const answer = (id: string, email: string | null, foreignKey: string | null): BatchUserPublicKey => ({ id, email, foreignKey, phone: null, publicKey: DIRECTORY_PUBLIC_KEY });
  if (kind === 'telephone' || kind === 'identity') return [];
  const seen = new Set<string>();
  const out: BatchUserPublicKey[] = [];
  const push = (item: BatchUserPublicKey | null) => {
    if (item && !seen.has(item.id)) {
      seen.add(item.id);
      out.push(item);
    }
  };
  if (user.kind === 'portal') {
    // Portal accounts: by email or by id; they have no foreign key.
    if (kind === 'foreignKey') return [];
    for (const value of values) {
      const condition = kind === 'email' ? eq(users.email, value.toLowerCase()) : isUuid(value) ? eq(users.id, value) : null;
      if (!condition) continue;
      const [row] = await db.select({ id: users.id, email: users.email }).from(users).where(condition).limit(1);
      push(row ? answer(row.id, row.email, null) : null);
    }
    return out;
  }
  const applicationId = user.applicationId!;
  const inApp = eq(applicationUsers.applicationId, applicationId);
  if (kind === 'email') {
    for (const value of values) {
      const row = await appUserByEmail(db, applicationId, value);
      push(row ? answer(row.id, row.email, row.sub) : null);
    }
    return out;
  }
  const ids = kind === 'localKey' ? values.filter((v) => isUuid(v)) : values;
  if (ids.length === 0) return [];
  const column = kind === 'localKey' ? applicationUsers.id : applicationUsers.sub;
  const rows = await db
    .select()
    .from(applicationUsers)
    .where(and(inApp, inArray(column, ids), kind === 'foreignKey' ? isNotNull(applicationUsers.sub) : undefined));
  for (const value of ids) {
    const row = rows.find((r) => (kind === 'localKey' ? r.id.toLowerCase() === value.toLowerCase() : r.sub === value));
    push(row ? answer(row.id, row.email, row.sub) : null);
  }
  return out;
}
