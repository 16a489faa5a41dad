import * as z from 'zod/mini';

/**
 * GET /api/config: what the portal needs from deployment config (privacy-policy URL, upload
 * storage URL, content-delivery URL), served at run time so one build runs anywhere.
 */
export const portalConfigSchema = z.object({
  privacyPolicyUrl: z.string(),
  /** Prefix of every upload URL the service hands out; the portal swaps it for cdnBaseUrl. */
  uploadBaseUrl: z.string(),
  cdnBaseUrl: z.string(),
  /** External developer documentation (the Getting Started tab link). */
  docsUrl: z.string(),
  /** The `aud` an application-signed user token must contain (Getting Started shows it). */
  platformAudience: z.string(),
  /**
   * How the service delivers email: `smtp`, or `outbox` (SMTP_URL unset: files in the data directory), where
   * the portal tells an account to find its codes and links in the Outbox. Absent from older services.
   */
  emailDelivery: z.optional(z.enum(['smtp', 'outbox'])),
});
export type PortalConfig = z.infer<typeof portalConfigSchema>;

/** logoUrl = upload URL with the upload host swapped for the CDN host and the query dropped. */
export function deriveLogoUrl(uploadUrl: string, config: Pick<PortalConfig, 'uploadBaseUrl' | 'cdnBaseUrl'>): string {
  const withoutQuery = uploadUrl.split('?')[0] ?? uploadUrl;
  if (!withoutQuery.startsWith(config.uploadBaseUrl)) throw new Error('Upload URL is not under the upload base');
  return config.cdnBaseUrl + withoutQuery.slice(config.uploadBaseUrl.length);
}
