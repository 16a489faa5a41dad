import * as z from 'zod/mini';
import { LANGUAGES, LOGO_CONTENT_TYPES, MAX_ADDRESS_LENGTH, MAX_TEXT_LENGTH, MAX_URL_LENGTH } from './constants.js';
import { authDomainDiscoverySchema, issuerUrlSchema } from './issuers.js';
import type { PublicJwk } from './keys.js';
import { messages } from './messages.js';
import { checkText, idParam, text } from './text.js';
import {
  emailSchema,
  hexColourSchema,
  httpUrlSchema,
  isHttpUrl,
  isMailto,
  requiredText,
  secureUrlSchema,
  supportContactSchema,
} from './rules.js';

export const callToActionSchema = z.object({
  headline: requiredText(),
  actionText: requiredText(),
  actionTarget: supportContactSchema,
});
export type CallToAction = z.infer<typeof callToActionSchema>;

export const emailPreferencesSchema = z.object({
  senderEmail: z.nullable(z.string()),
  senderName: z.nullable(z.string()),
  primaryColour: z.string(),
  secondaryColour: z.string(),
  onlySendEssentialEmails: z.boolean(),
  callToAction: z.nullable(callToActionSchema),
});

/** What may be written into emailPreferences: every member optional, sender fields validated. */
export const emailPreferencesUpdateSchema = z.object({
  senderEmail: z.nullish(emailSchema),
  senderName: z.nullish(requiredText()),
  primaryColour: z.optional(hexColourSchema),
  secondaryColour: z.optional(hexColourSchema),
  onlySendEssentialEmails: z.optional(z.boolean()),
  callToAction: z.nullish(callToActionSchema),
});
export type EmailPreferencesUpdate = z.infer<typeof emailPreferencesUpdateSchema>;

export const applicationSchema = z.object({
  applicationId: z.string(),
  name: z.string(),
  companyName: z.string(),
  mailingAddress: z.string(),
  owners: z.array(z.string()),
  logoUrl: z.nullable(z.string()),
  privacyPolicy: z.nullable(z.string()),
  supportContact: z.nullable(z.string()),
  appLink: z.nullable(z.string()),
  authDomains: z.array(z.string()),
  corsDomains: z.array(z.string()),
  authKeys: z.record(z.string(), z.custom<PublicJwk>()),
  /** The auth domains added with discovery and where their keys come from (absent: none). */
  authDomainDiscovery: z.optional(authDomainDiscoverySchema),
  emailPreferences: emailPreferencesSchema,
  lastUpdated: z.number(),
});
export type Application = z.infer<typeof applicationSchema>;

/** GET application: the caller's applications. */
export const applicationListSchema = z.array(applicationSchema);

const logoUrlSchema = z.string().check(z.trim(), z.maxLength(MAX_URL_LENGTH, messages.tooLong), checkText(), z.refine(isHttpUrl, messages.invalidUrl));

export const createApplicationSchema = z.object({
  name: requiredText(),
  companyName: requiredText(),
  mailingAddress: requiredText(MAX_ADDRESS_LENGTH, 'multiline'),
  privacyPolicy: z.nullish(httpUrlSchema),
  supportContact: z.nullish(supportContactSchema),
  appLink: z.nullish(httpUrlSchema),
  logoUrl: z.nullish(logoUrlSchema),
  emailPreferences: z.optional(emailPreferencesUpdateSchema),
});
export type CreateApplication = z.infer<typeof createApplicationSchema>;

/** Partial update: absent = unchanged, null = cleared (optional fields only). Unknown fields are ignored. */
export const updateApplicationSchema = z.object({
  name: z.optional(requiredText()),
  companyName: z.optional(requiredText()),
  mailingAddress: z.optional(requiredText(MAX_ADDRESS_LENGTH, 'multiline')),
  privacyPolicy: z.nullish(httpUrlSchema),
  supportContact: z.nullish(supportContactSchema),
  appLink: z.nullish(httpUrlSchema),
  logoUrl: z.nullish(logoUrlSchema),
  emailPreferences: z.optional(emailPreferencesUpdateSchema),
});
export type UpdateApplication = z.infer<typeof updateApplicationSchema>;

export const applicationIdParamsSchema = z.object({
  applicationId: z.uuid({ error: 'Not a valid application id' }),
});

export const ownerSchema = z.object({
  userId: z.string(),
  email: z.string(),
  displayName: z.nullable(z.string()),
  orphan: z.boolean(),
  foreign: z.boolean(),
});
export type Owner = z.infer<typeof ownerSchema>;

export const ownerBodySchema = z.object({ userId: z.uuid({ error: 'Not a valid user id' }) });

export const directoryQuerySchema = z.object({ email: emailSchema });
export const directoryResultSchema = z.object({ id: z.string(), publicKey: z.nullable(z.string()) });
export type DirectoryResult = z.infer<typeof directoryResultSchema>;

export const logoUploadRequestSchema = z.object({
  contentType: z.enum(LOGO_CONTENT_TYPES, { error: messages.logoWrongType }),
});
export const logoUploadResponseSchema = z.object({ uploadUrl: z.string() });

export const issuerBodySchema = z.object({ url: issuerUrlSchema });
export const corsBodySchema = z.object({ url: secureUrlSchema });

/** Path of GET /email/preview/{applicationId}: an unknown or malformed id is the usual 404, a control character a 400. */
export const emailPreviewParamsSchema = z.object({ applicationId: idParam() });

/** Query of GET /email/preview/{applicationId}; empty values count as absent. */
const emptyAsAbsent = <T extends z.core.SomeType>(schema: T) =>
  z.pipe(
    z.transform((v: unknown) => (v === '' ? undefined : v)),
    z.optional(schema),
  );
export const emailPreviewQuerySchema = z.object({
  ctaHeadline: emptyAsAbsent(text({ max: MAX_TEXT_LENGTH, min: 0, trim: false })),
  ctaAbridged: emptyAsAbsent(text({ max: MAX_TEXT_LENGTH, min: 0, trim: false })),
  ctaTarget: emptyAsAbsent(
    z
      .string()
      .check(
        z.maxLength(MAX_URL_LENGTH, messages.tooLong),
        checkText(),
        z.refine((v) => isHttpUrl(v) || isMailto(v), messages.invalidUrlOrMailto),
      ),
  ),
  primaryColour: emptyAsAbsent(hexColourSchema),
  secondaryColour: emptyAsAbsent(hexColourSchema),
  /** The card's unsaved sender name, essentials-only choice, and a call to action switched off. */
  senderName: emptyAsAbsent(text({ max: MAX_TEXT_LENGTH, min: 0, trim: false })),
  onlySendEssentialEmails: emptyAsAbsent(z.enum(['true', 'false'])),
  /** `none`: the sample without a call to action, even when one is stored. */
  cta: emptyAsAbsent(z.enum(['none'])),
  /** The language the sample is written in (the portal passes its own); English when absent. */
  lang: emptyAsAbsent(z.enum(LANGUAGES)),
});
export type EmailPreviewQuery = z.infer<typeof emailPreviewQuerySchema>;

/** The wizard's four steps, each a form of its own. */
export const wizardStepSchemas = [
  z.object({
    name: requiredText(),
    companyName: requiredText(),
    mailingAddress: requiredText(MAX_ADDRESS_LENGTH, 'multiline'),
  }),
  z.object({
    privacyPolicy: httpUrlSchema,
    supportContact: supportContactSchema,
    appLink: z.union([z.literal(''), httpUrlSchema]),
  }),
  z.object({
    senderEmail: emailSchema,
    senderName: requiredText(),
    onlySendEssentialEmails: z.boolean(),
    callToAction: z.nullable(callToActionSchema),
  }),
  z.object({
    logoUrl: z.union([z.literal(''), logoUrlSchema]),
    primaryColour: hexColourSchema,
    secondaryColour: hexColourSchema,
  }),
] as const;
