import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { apiErrors, DEFAULT_PRIMARY_COLOUR, DEFAULT_SECONDARY_COLOUR, type Language } from '@latchkey/contract';
import { renderBrandedEmail } from '@latchkey/email';
import { users } from '../../db/schema.js';
import { conflict } from '../../errors.js';

/**
 * Invites someone who has no account: a pending user with a one-time code (stored as an argon2 hash),
 * emailed as a link to the portal's accept-invite screen. Inviting again replaces the code.
 */
export async function createInvitation(
  app: FastifyInstance,
  input: { email: string; inviterName?: string | null; language?: Language },
): Promise<void> {
  const email = input.email.toLowerCase();
  const [existing] = await app.db.select().from(users).where(eq(users.email, email)).limit(1);
  if (existing?.passwordHash) throw conflict(apiErrors.accountExists);
  const code = randomBytes(9).toString('base64url');
  const values = {
    inviteCodeHash: await app.passwords.hash(code),
    inviteExpiresAt: new Date(Date.now() + app.config.inviteTtl * 1000),
  };
  if (existing) await app.db.update(users).set(values).where(eq(users.id, existing.id));
  else await app.db.insert(users).values({ email, ...values }).onConflictDoUpdate({ target: users.email, set: values });

  // In the fragment: a browser never sends it, so no server or proxy log sees the code (the page reads it).
  const inviteUrl = `${app.config.publicUrl}/accept-invite#email=${encodeURIComponent(email)}&code=${encodeURIComponent(code)}`;
  const mail = await renderBrandedEmail({
    branding: {
      name: 'Latchkey',
      logoUrl: null,
      companyName: 'Latchkey',
      mailingAddress: '',
      privacyPolicy: app.config.portal.privacyPolicyUrl,
      supportContact: null,
      emailPreferences: {
        primaryColour: DEFAULT_PRIMARY_COLOUR,
        secondaryColour: DEFAULT_SECONDARY_COLOUR,
        onlySendEssentialEmails: true,
        callToAction: null,
      },
    },
    message: { kind: 'invitation', inviteUrl, code, recipientEmail: email, inviterName: input.inviterName ?? null },
    language: input.language,
  });
  await app.mailer.send({ to: email, ...mail });
}
