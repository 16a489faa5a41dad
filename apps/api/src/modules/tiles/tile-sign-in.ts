import { and, desc, eq, gt, isNull, or, sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import {
  isUuid,
  LOCK_USER_TOKEN_TTL_HOURS,
  TILE_SIGN_IN_TTL_MINUTES,
  tileErrors,
  type Language,
  type TileSignInResponse,
} from '@latchkey/contract';
import { renderBrandedEmail } from '@latchkey/email';
import { applicationUsers, lockShares, tileLocks, tiles, tileSignInTokens } from '../../db/schema.js';
import { AppError, badRequest } from '../../errors.js';
import { hashSecret, newSecret } from '../account/account-trust.service.js';
import { loadApplication } from '../email-preview/email-preview.service.js';
import { keepsSecretEmails, sendApplicationEmail } from '../outbox/outbox.service.js';

type App = FastifyInstance;

/**
 * Signing in at a tile (docs/decisions/0013-tile-sign-in.md). A person a lock is shared with is an
 * application user, with no portal account and no password: on the tile's page they give their email
 * address, and the platform emails a single-use link (its secret stored hashed, as the password reset's)
 * that signs them in as that application user with a lock-user token.
 */

/**
 * The application user the link is for: someone with this address (any case, pending or active) in the
 * tile's application who holds a share of one of the tile's locks that has not ended and whose invitation
 * has not expired. Several such users: the one the application's backend knows (a `sub`), seen last.
 */
async function sharedUser(app: App, tileId: string, email: string) {
  const [user] = await app.db
    .select({ id: applicationUsers.id, email: applicationUsers.email, applicationId: applicationUsers.applicationId })
    .from(tiles)
    .innerJoin(tileLocks, eq(tileLocks.tileId, tiles.id))
    .innerJoin(lockShares, eq(lockShares.lockId, tileLocks.lockId))
    .innerJoin(applicationUsers, and(eq(applicationUsers.id, lockShares.userId), eq(applicationUsers.applicationId, tiles.applicationId)))
    .where(
      and(
        eq(tiles.id, tileId),
        sql`lower(${applicationUsers.email}) = ${email}`,
        or(isNull(lockShares.endsAt), gt(lockShares.endsAt, sql`now()`)),
        or(isNull(lockShares.inviteExpiresAt), gt(lockShares.inviteExpiresAt, sql`now()`)),
      ),
    )
    .orderBy(sql`${applicationUsers.sub} is null`, sql`${applicationUsers.lastSeenAt} desc nulls last`, desc(applicationUsers.createdAt))
    .limit(1);
  return user?.email ? { ...user, email: user.email } : null;
}

/**
 * POST /tile/{tileId}/sign-in, after the answer (the same 202 whatever happens here): a link to
 * `<PUBLIC_URL>/t/{tileId}#signin=<secret>` for a shared user, nothing for any other address (nor once the
 * application's email allowance is spent). The email wears the application's branding like its share
 * emails. With SMTP it is not kept in the Outbox, whose readers could otherwise sign in as the user; without
 * SMTP it went to a file only, and is kept in the application's Outbox for its owners to find.
 */
export async function initiateTileSignIn(app: App, tileId: string, email: string, language: Language): Promise<void> {
  if (!isUuid(tileId)) return;
  const id = tileId.toLowerCase();
  const user = await sharedUser(app, id, email.trim().toLowerCase());
  if (!user) return;
  // Sent on the application's behalf: charged to it (its owners' allowance while none has a verified
  // address); a spent allowance sends nothing, and the answer was the same 202 anyway.
  try {
    await app.chargeEmail({ applicationId: user.applicationId });
  } catch (err) {
    if (err instanceof AppError && err.statusCode === 429) return;
    throw err;
  }
  const secret = newSecret();
  await app.db.insert(tileSignInTokens).values({
    applicationUserId: user.id,
    tileId: id,
    tokenHash: hashSecret(secret),
    expiresAt: new Date(Date.now() + TILE_SIGN_IN_TTL_MINUTES * 60_000),
  });
  const { branding } = await loadApplication(app.db, user.applicationId);
  const words = texts[language] ?? texts.en;
  // In the fragment: a browser never sends it, so no server or proxy log sees the secret (the page reads it).
  const url = `${app.config.publicUrl}/t/${id}#signin=${encodeURIComponent(secret)}`;
  const rendered = await renderBrandedEmail({
    branding,
    message: {
      kind: 'notice',
      subject: words.subject(branding.name),
      heading: words.heading,
      paragraphs: words.paragraphs(branding.name, TILE_SIGN_IN_TTL_MINUTES),
      action: { text: words.action, url },
    },
    language,
  });
  await sendApplicationEmail(app, { applicationId: user.applicationId, kind: 'tile-sign-in', to: user.email, ...rendered }, { keep: keepsSecretEmails(app) });
}

/**
 * POST /tile/sign-in/verify: spends the link (one UPDATE: of two uses at once, one wins; every other open
 * link of the user dies with it) and answers a lock-user token for its application user. A pending user
 * stays pending, without a `sub`: their application's backend may still claim them.
 */
export async function verifyTileSignIn(app: App, secret: string): Promise<TileSignInResponse> {
  const tokenHash = hashSecret(secret);
  const [row] = await app.db.select().from(tileSignInTokens).where(eq(tileSignInTokens.tokenHash, tokenHash)).limit(1);
  if (!row) throw badRequest(tileErrors.signInLinkInvalid);
  if (row.usedAt) throw badRequest(tileErrors.signInLinkUsed);
  if (row.expiresAt.getTime() <= Date.now()) throw badRequest(tileErrors.signInLinkExpired);
  const user = await app.db.transaction(async (tx) => {
    const spent = await tx
      .update(tileSignInTokens)
      .set({ usedAt: new Date() })
      .where(and(eq(tileSignInTokens.id, row.id), isNull(tileSignInTokens.usedAt), gt(tileSignInTokens.expiresAt, sql`now()`)))
      .returning({ id: tileSignInTokens.id });
    if (spent.length === 0) throw badRequest(tileErrors.signInLinkUsed);
    await tx
      .update(tileSignInTokens)
      .set({ usedAt: new Date() })
      .where(and(eq(tileSignInTokens.applicationUserId, row.applicationUserId), isNull(tileSignInTokens.usedAt)));
    const [seen] = await tx
      .update(applicationUsers)
      .set({ lastSeenAt: new Date() })
      .where(eq(applicationUsers.id, row.applicationUserId))
      .returning({ id: applicationUsers.id, applicationId: applicationUsers.applicationId });
    return seen ?? null;
  });
  if (!user) throw badRequest(tileErrors.signInLinkInvalid);
  const { token, exp } = await app.tokens.signLockUser({ sub: user.id, app: user.applicationId }, LOCK_USER_TOKEN_TTL_HOURS * 3600);
  return { authToken: token, userId: user.id, expiresAt: exp };
}

const texts = {
  en: {
    subject: (app: string) => `Your sign-in link for ${app}`,
    heading: 'Sign in at the door',
    paragraphs: (app: string, minutes: number) => [
      `Someone — hopefully you — asked to sign in at a door of ${app} to open it from the browser. The link works once, for ${minutes} minutes.`,
      'If you did not ask for this, ignore this email: without the link nobody can use your keys.',
    ],
    action: 'Sign in and open the door',
  },
  de: {
    subject: (app: string) => `Ihr Anmeldelink für ${app}`,
    heading: 'An der Tür anmelden',
    paragraphs: (app: string, minutes: number) => [
      `Jemand – hoffentlich Sie – möchte sich an einer Tür von ${app} anmelden, um sie im Browser zu öffnen. Der Link funktioniert einmal, ${minutes} Minuten lang.`,
      'Wenn Sie das nicht angefordert haben, ignorieren Sie diese E-Mail: Ohne den Link kann niemand Ihre Schlüssel verwenden.',
    ],
    action: 'Anmelden und Tür öffnen',
  },
} satisfies Record<Language, { subject: (app: string) => string; heading: string; paragraphs: (app: string, minutes: number) => string[]; action: string }>;
