import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { and, eq, gt, isNull, sql } from 'drizzle-orm';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  accountErrors,
  ACCOUNT_INVITATION_LIMIT,
  APPLICATION_EMAIL_LIMIT,
  EMAIL_VERIFICATION_TTL_HOURS,
  emailLimitErrors,
  PASSWORD_RESET_TTL_MINUTES,
  UNVERIFIED_EMAIL_LIMIT,
  type AuthResponse,
  type Language,
  type PasswordResetVerify,
} from '@latchkey/contract';
import { portalBranding, renderAccountEmail, type AccountEmail } from '@latchkey/email';
import { accountTokens, applicationOwners, sessions, users } from '../../db/schema.js';
import { AppError, badRequest } from '../../errors.js';
import { SecretBox } from '../../lib/secret-box.js';
import { loadOrCreateSharedSecret } from '../../lib/server-secrets.js';
import { createSession } from '../../lib/sessions.js';
import { sendAccountMail } from '../outbox/outbox.service.js';
import { endEarlierCertificates } from '../certificates/certificates.service.js';

type App = FastifyInstance;

export const PURPOSE = { passwordReset: 'password-reset', verifyEmail: 'email-verify', keyCode: 'key-verify', passkeyCode: 'passkey-add' } as const;

/** SHA-256 of a link's secret, hex: what the database keeps (the secret itself only travels in the email). */
export const hashSecret = (secret: string) => createHash('sha256').update(secret, 'utf8').digest('hex');
/** A link's secret: 256 random bits, base64url. */
export const newSecret = () => randomBytes(32).toString('base64url');

/**
 * The portal's own mail: branded as the portal, in the reader's language, through the mailer; without SMTP
 * kept in the account's Outbox too (sendAccountMail), where its owner finds the code or link.
 */
export async function sendAccountEmail(app: App, to: string, email: AccountEmail, language: Language): Promise<void> {
  const branding = portalBranding({ privacyPolicy: app.config.portal.privacyPolicyUrl });
  const mail = await renderAccountEmail(branding, email, language);
  await sendAccountMail(app, to, email.kind, mail);
}

/**
 * Work done after the answer has gone (a reset request): the caller learns nothing from how long it takes.
 * Failures are logged. Tests and shutdown can wait for what is still running (`settleAccountMail`): the
 * work in progress is the app's own (`app.accountMailRunning`), so two apps in one process wait for none
 * of each other's.
 */
export function afterReply(app: App, work: () => Promise<void>): void {
  const running = app.accountMailRunning;
  const p = work().catch((err: unknown) => app.log.error({ err }, 'account email failed'));
  running.add(p);
  void p.finally(() => running.delete(p));
}
/** Waits until the app's work after the answer (afterReply), including what that work starts, is done. */
export async function settleAccountMail(app: App): Promise<void> {
  const running = app.accountMailRunning;
  while (running.size > 0) await Promise.all([...running]);
}

// ---------------------------------------------------------------------------------------------------------
// Forgot password

/**
 * POST /account/password/reset/initialize: for an account with a password, a single-use link (its secret
 * stored hashed, 30 minutes) by email; for any other address nothing. Runs after the answer, which is the
 * same 204 either way.
 */
export async function initializePasswordReset(app: App, email: string, language: Language): Promise<void> {
  const address = email.toLowerCase();
  const [user] = await app.db.select({ id: users.id, passwordHash: users.passwordHash }).from(users).where(eq(users.email, address)).limit(1);
  if (!user?.passwordHash) return;
  const token = newSecret();
  await app.db.insert(accountTokens).values({
    userId: user.id,
    purpose: PURPOSE.passwordReset,
    tokenHash: hashSecret(token),
    expiresAt: new Date(Date.now() + PASSWORD_RESET_TTL_MINUTES * 60_000),
  });
  // In the fragment: a browser never sends it, so no server or proxy log sees the token (the page reads it).
  const url = `${app.config.publicUrl}/reset-password#userId=${encodeURIComponent(user.id)}&token=${encodeURIComponent(token)}`;
  await sendAccountEmail(app, address, { kind: 'passwordReset', url, minutes: PASSWORD_RESET_TTL_MINUTES }, language);
}

/**
 * POST /account/password/reset/verify: spends the link (one UPDATE: of two uses at once, one wins), sets the
 * password, ends every session and every certificate of the account, proves the email, and signs in.
 */
export async function verifyPasswordReset(app: App, input: PasswordResetVerify, userAgent: string | null): Promise<AuthResponse> {
  const tokenHash = hashSecret(input.token);
  const [row] = await app.db
    .select()
    .from(accountTokens)
    .where(and(eq(accountTokens.tokenHash, tokenHash), eq(accountTokens.userId, input.userId), eq(accountTokens.purpose, PURPOSE.passwordReset)))
    .limit(1);
  if (!row) throw badRequest(accountErrors.resetLinkInvalid);
  if (row.usedAt) throw badRequest(accountErrors.resetLinkUsed);
  if (row.expiresAt.getTime() <= Date.now()) throw badRequest(accountErrors.resetLinkExpired);
  // Hashed before the link is spent: a failure here leaves the link usable.
  const passwordHash = await app.passwords.hash(input.password);
  const user = await app.db.transaction(async (tx) => {
    const spent = await tx
      .update(accountTokens)
      .set({ usedAt: new Date() })
      .where(and(eq(accountTokens.id, row.id), isNull(accountTokens.usedAt), gt(accountTokens.expiresAt, sql`now()`)))
      .returning({ id: accountTokens.id });
    if (spent.length === 0) throw badRequest(accountErrors.resetLinkUsed);
    // Every other reset link of the account dies with this one.
    await tx
      .update(accountTokens)
      .set({ usedAt: new Date() })
      .where(and(eq(accountTokens.userId, row.userId), eq(accountTokens.purpose, PURPOSE.passwordReset), isNull(accountTokens.usedAt)));
    const [updated] = await tx
      .update(users)
      .set({ passwordHash, passwordChangeRequired: false, emailVerified: true, inviteCodeHash: null, inviteExpiresAt: null })
      .where(eq(users.id, row.userId))
      .returning({ id: users.id, email: users.email });
    if (!updated) throw badRequest(accountErrors.resetLinkInvalid);
    await tx.update(sessions).set({ revokedAt: new Date() }).where(and(eq(sessions.userId, row.userId), isNull(sessions.revokedAt)));
    // The keys certified under the old password stop opening doors too.
    await endEarlierCertificates(tx, row.userId);
    return updated;
  });
  return createSession(app, user, false, { userAgent });
}

// ---------------------------------------------------------------------------------------------------------
// Email verification

/** A fresh verification link for the account's address (older ones stop working). */
export async function sendVerificationEmail(app: App, user: { id: string; email: string }, language: Language): Promise<void> {
  const code = newSecret();
  await app.db.transaction(async (tx) => {
    await tx
      .update(accountTokens)
      .set({ usedAt: new Date() })
      .where(and(eq(accountTokens.userId, user.id), eq(accountTokens.purpose, PURPOSE.verifyEmail), isNull(accountTokens.usedAt)));
    await tx.insert(accountTokens).values({
      userId: user.id,
      purpose: PURPOSE.verifyEmail,
      tokenHash: hashSecret(code),
      expiresAt: new Date(Date.now() + EMAIL_VERIFICATION_TTL_HOURS * 3_600_000),
    });
  });
  // In the fragment, as the reset link's token: the page sends it to the API in a body.
  const url = `${app.config.publicUrl}/verify-email#code=${encodeURIComponent(code)}`;
  await sendAccountEmail(app, user.email, { kind: 'verifyEmail', url, hours: EMAIL_VERIFICATION_TTL_HOURS }, language);
}

/** PUT /account/email/verify (`{code}`, or `?code=` from the SDKs): the code alone proves the address (the SDK sends no token). */
export async function verifyEmail(app: App, code: string): Promise<void> {
  const verified = await app.db.transaction(async (tx) => {
    const [spent] = await tx
      .update(accountTokens)
      .set({ usedAt: new Date() })
      .where(
        and(
          eq(accountTokens.tokenHash, hashSecret(code)),
          eq(accountTokens.purpose, PURPOSE.verifyEmail),
          isNull(accountTokens.usedAt),
          gt(accountTokens.expiresAt, sql`now()`),
        ),
      )
      .returning({ userId: accountTokens.userId });
    if (!spent) return false;
    await tx.update(users).set({ emailVerified: true }).where(eq(users.id, spent.userId));
    return true;
  });
  if (!verified) throw badRequest(accountErrors.verifyLinkInvalid);
}

/** POST /account/email/reverify: a new link, unless the address is proved already (then nothing). */
export async function reverifyEmail(app: App, userId: string, language: Language): Promise<void> {
  const [user] = await app.db.select({ id: users.id, email: users.email, emailVerified: users.emailVerified }).from(users).where(eq(users.id, userId)).limit(1);
  if (!user || user.emailVerified) return;
  await sendVerificationEmail(app, user, language);
}

// ---------------------------------------------------------------------------------------------------------
// What the platform may send: the daily allowance of an unverified account, an application's hourly limit

/** What one email is charged to, before it is sent (`chargeEmail`). */
export interface EmailCharge {
  /** The portal account that asks for it: an unverified one spends its own daily allowance. */
  senderId?: string | null;
  /**
   * The application it is sent for: while none of its owners has verified their address, it spends every
   * owner's daily allowance (whoever asks: an owner, or one of its users through the SDKs).
   */
  applicationId?: string | null;
  /** An invitation or a key email to someone: counted against the application's hourly limit too. */
  keyEmail?: boolean;
  /** An invitation to the portal (POST /account/invite): counted against the sender's hourly limit. */
  portalInvitation?: boolean;
}

/**
 * A counter of the rate-limit store (in Redis when configured, so every instance counts together), charged
 * by key rather than by request: `peek` reads it, `take` counts one.
 */
function keyedCounter(app: App, limit: { max: number; windowSeconds: number }) {
  const limiter = app.createRateLimit({ keyGenerator: (req) => (req as unknown as { counterKey: string }).counterKey, max: limit.max, timeWindow: limit.windowSeconds * 1000 });
  const call = (key: string, increment: boolean) => limiter({ counterKey: key, routeOptions: { config: {} } } as unknown as FastifyRequest, { increment });
  const state = (result: Awaited<ReturnType<typeof limiter>>) => (result.isAllowed ? { left: limit.max, retryAfter: 1 } : { left: result.remaining, retryAfter: Math.max(1, result.ttlInSeconds) });
  return {
    /** What is left before this email (read only). */
    peek: async (key: string) => state(await call(key, false)),
    /** Counts this email; `exceeded` when it went over (a race with another request). */
    take: async (key: string) => {
      const result = await call(key, true);
      return { exceeded: !result.isAllowed && result.isExceeded, retryAfter: result.isAllowed ? 1 : Math.max(1, result.ttlInSeconds) };
    },
  };
}

/**
 * Before the platform sends an email for someone (a share by email, an invitation, an owner invitation, a
 * test email, a tile's sign-in link): every allowance it counts against (`EmailCharge`) is read first and
 * then charged, so a refusal — a 429 that says which allowance is spent, with Retry-After — charges and
 * sends nothing. An unverified account gets UNVERIFIED_EMAIL_LIMIT a day, enough to try the sandbox, too few
 * to spam with, and so does an application none of whose owners has verified their address (its owners'
 * own allowances, shared with what they send themselves).
 */
export async function registerAccountTrust(app: App): Promise<void> {
  const unverified = keyedCounter(app, UNVERIFIED_EMAIL_LIMIT);
  const perApplication = keyedCounter(app, APPLICATION_EMAIL_LIMIT);
  const portalInvitations = keyedCounter(app, ACCOUNT_INVITATION_LIMIT);

  async function chargeEmail(charge: EmailCharge): Promise<void> {
    const counts: { counter: ReturnType<typeof keyedCounter>; key: string; error: string }[] = [];
    const charged = new Set<string>();
    if (charge.senderId) {
      const [row] = await app.db.select({ emailVerified: users.emailVerified }).from(users).where(eq(users.id, charge.senderId)).limit(1);
      if (row && !row.emailVerified) {
        counts.push({ counter: unverified, key: `unverified-mail:${charge.senderId}`, error: accountErrors.unverifiedSendLimit });
        charged.add(charge.senderId);
      }
      if (charge.portalInvitation) counts.push({ counter: portalInvitations, key: `portal-invitations:${charge.senderId}`, error: emailLimitErrors.accountInvitations });
    }
    if (charge.applicationId) {
      const owners = await app.db
        .select({ id: users.id, emailVerified: users.emailVerified })
        .from(applicationOwners)
        .innerJoin(users, eq(users.id, applicationOwners.userId))
        .where(eq(applicationOwners.applicationId, charge.applicationId));
      if (!owners.some((o) => o.emailVerified)) {
        for (const owner of owners) {
          if (charged.has(owner.id)) continue;
          counts.push({ counter: unverified, key: `unverified-mail:${owner.id}`, error: emailLimitErrors.applicationUnverified });
          charged.add(owner.id);
        }
      }
      if (charge.keyEmail) counts.push({ counter: perApplication, key: `application-mail:${charge.applicationId}`, error: emailLimitErrors.applicationHourly });
    }
    for (const count of counts) {
      const { left, retryAfter } = await count.counter.peek(count.key);
      if (left <= 0) throw new AppError(429, count.error, { 'retry-after': String(retryAfter) });
    }
    let refusal: AppError | null = null;
    for (const count of counts) {
      const { exceeded, retryAfter } = await count.counter.take(count.key);
      refusal ??= exceeded ? new AppError(429, count.error, { 'retry-after': String(retryAfter) }) : null;
    }
    if (refusal) throw refusal;
  }

  app.decorate('accountMailRunning', new Set<Promise<void>>());
  app.decorate('chargeEmail', chargeEmail);
  app.decorate('chargeUnverifiedEmail', async function (request: FastifyRequest) {
    await chargeEmail({ senderId: request.user.id });
  });
  // Loaded at start-up, so no request creates it (the bad-input suite compares the database before and after).
  const secretBox = new SecretBox(app.config.secretsEncryptionKey);
  app.decorate('keyCodes', codeBox(await loadOrCreateSharedSecret(app.db, secretBox, 'key-verification-codes', () => randomBytes(32).toString('base64'))));
}

declare module 'fastify' {
  interface FastifyInstance {
    /** preHandler of the routes that make the platform send an email for a portal user: an unverified account sends only a few a day. */
    chargeUnverifiedEmail(request: FastifyRequest): Promise<void>;
    /** Charges one email about to be sent to every allowance it counts against; a 429 (nothing charged) when one is spent. */
    chargeEmail(charge: EmailCharge): Promise<void>;
    /** The account emails this app is still sending after their answer went (afterReply). */
    accountMailRunning: Set<Promise<void>>;
    /** Seals the six-digit codes of key verification (certificates/key-verification.ts). */
    keyCodes: CodeBox;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Six-digit codes, sealed (the check needs the code itself to verify the key's signature over it)

export interface CodeBox {
  seal(code: string): string;
  open(sealed: string): string;
}

export function codeBox(secret: string): CodeBox {
  const key = createHash('sha256').update(`key-verification-codes:${secret}`).digest();
  return {
    seal(code) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(code, 'utf8'), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
    },
    open(sealed) {
      const raw = Buffer.from(sealed, 'base64');
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    },
  };
}
