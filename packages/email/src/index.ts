export { renderBrandedEmail } from './render.js';
export { buildEmailModel, type EmailModel } from './model.js';
export { portalBranding } from './portal-branding.js';
export { emailTexts, pickLanguage, type EmailTexts } from './texts/index.js';
export { safeColour, safeHref, safeImageSrc } from './safe.js';
export type { EmailBranding, EmailMessage, InvitationMessage, KeyShareMessage, NoticeMessage, RenderedEmail, SampleMessage } from './types.js';
export { renderAccountEmail, type AccountEmail } from './account-emails.js';
