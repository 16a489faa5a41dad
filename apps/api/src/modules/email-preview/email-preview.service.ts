import { eq } from 'drizzle-orm';
import { apiErrors, DEFAULT_CALL_TO_ACTION, type EmailPreviewQuery, isUuid } from '@latchkey/contract';
import { LRUCache } from 'lru-cache';
import { renderBrandedEmail, type EmailBranding } from '@latchkey/email';
import type { Db } from '../../db/client.js';
import { applications } from '../../db/schema.js';
import { notFound } from '../../errors.js';

/**
 * Rendered previews, keyed by application id, its version (bumped on every change) and the overrides,
 * so a warm preview is one primary-key read and no rendering. One per app (the preview routes make it),
 * so two apps in one process share none: a stale entry can never be served, because a change bumps the
 * version in the key.
 */
export type PreviewCache = LRUCache<string, string>;
export const createPreviewCache = (): PreviewCache => new LRUCache<string, string>({ max: 500 });

type Row = Pick<typeof applications.$inferSelect, 'id' | 'version'> & { branding: EmailBranding };

/** The application's id, version and branding as the emails use them (the preview, the share invitations). */
export async function loadApplication(db: Db, applicationId: string): Promise<Row> {
  if (!isUuid(applicationId)) throw notFound(apiErrors.applicationNotFound);
  const [row] = await db.select().from(applications).where(eq(applications.id, applicationId)).limit(1);
  if (!row) throw notFound(apiErrors.applicationNotFound);
  return {
    id: row.id,
    version: row.version,
    branding: {
      name: row.name,
      logoUrl: row.logoUrl,
      companyName: row.companyName,
      mailingAddress: row.mailingAddress,
      privacyPolicy: row.privacyPolicy,
      supportContact: row.supportContact,
      appLink: row.appLink,
      emailPreferences: {
        senderName: row.senderName,
        senderEmail: row.senderEmail,
        primaryColour: row.primaryColour,
        secondaryColour: row.secondaryColour,
        onlySendEssentialEmails: row.onlySendEssentialEmails,
        callToAction: row.callToAction,
      },
    },
  };
}

/**
 * The query overrides what is stored (empty values were dropped by the schema). Any CTA field
 * given makes a call to action, its missing parts taken from the stored one or the default.
 */
export function applyOverrides(branding: EmailBranding, query: EmailPreviewQuery): EmailBranding {
  const prefs = branding.emailPreferences;
  const ctaGiven = query.ctaHeadline !== undefined || query.ctaAbridged !== undefined || query.ctaTarget !== undefined;
  const base = prefs.callToAction ?? DEFAULT_CALL_TO_ACTION;
  return {
    ...branding,
    emailPreferences: {
      ...prefs,
      senderName: query.senderName ?? prefs.senderName,
      onlySendEssentialEmails: query.onlySendEssentialEmails === undefined ? prefs.onlySendEssentialEmails : query.onlySendEssentialEmails === 'true',
      primaryColour: query.primaryColour ?? prefs.primaryColour,
      secondaryColour: query.secondaryColour ?? prefs.secondaryColour,
      callToAction:
        query.cta === 'none'
          ? null
          : ctaGiven
            ? {
                headline: query.ctaHeadline ?? base.headline,
                actionText: query.ctaAbridged ?? base.actionText,
                actionTarget: query.ctaTarget ?? base.actionTarget,
              }
            : prefs.callToAction,
    },
  };
}

export async function renderPreview(db: Db, cache: PreviewCache, applicationId: string, query: EmailPreviewQuery): Promise<string> {
  const app = await loadApplication(db, applicationId);
  const key = JSON.stringify([app.id, app.version, query.ctaHeadline, query.ctaAbridged, query.ctaTarget, query.primaryColour, query.secondaryColour, query.senderName, query.onlySendEssentialEmails, query.cta, query.lang]);
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  const { html } = await renderBrandedEmail({ branding: applyOverrides(app.branding, query), message: { kind: 'sample' }, language: query.lang });
  cache.set(key, html);
  return html;
}
