import type { CallToAction } from '@latchkey/contract';
import { API_BASE } from '../../../lib/http';

export interface PreviewInput {
  /** null: the form has no call to action (switched off), whatever is stored; undefined: as stored. */
  callToAction?: CallToAction | null;
  senderName?: string;
  onlySendEssentialEmails?: boolean;
  primaryColour?: string;
  secondaryColour?: string;
  /** The portal's language; the sample is written in it (English needs no parameter). */
  lang?: string;
}

/**
 * The preview's path under the API base; empty values are omitted. Every field of the form the sample
 * shows is passed (the sender name too), so the preview is the unsaved form. actionText is what the API
 * calls ctaAbridged. The overrides are answered to a signed-in owner only.
 */
export function emailPreviewPath(applicationId: string, input: PreviewInput): string {
  const query = new URLSearchParams();
  const add = (key: string, value: string | undefined) => {
    if (value && value.trim() !== '') query.set(key, value.trim());
  };
  add('ctaHeadline', input.callToAction?.headline);
  add('ctaTarget', input.callToAction?.actionTarget);
  add('ctaAbridged', input.callToAction?.actionText);
  if (input.callToAction === null) add('cta', 'none');
  add('senderName', input.senderName);
  if (input.onlySendEssentialEmails !== undefined) add('onlySendEssentialEmails', String(input.onlySendEssentialEmails));
  add('primaryColour', input.primaryColour);
  add('secondaryColour', input.secondaryColour);
  if (input.lang && input.lang !== 'en') add('lang', input.lang);
  const qs = query.toString();
  return `/email/preview/${encodeURIComponent(applicationId)}${qs ? `?${qs}` : ''}`;
}

/** The preview's URL on this origin. */
export function emailPreviewSrc(applicationId: string, input: PreviewInput): string {
  return API_BASE + emailPreviewPath(applicationId, input);
}
