export { renderBrandedEmail } from './render.js';
export { buildEmailModel, type EmailModel } from './model.js';
export { LruCache } from './lru.js';
export { portalBranding } from './portal-branding.js';
export { safeColour, safeHref, safeImageSrc } from './safe.js';
export type { EmailBranding, EmailMessage, InvitationMessage, NoticeMessage, RenderedEmail, SampleMessage } from './types.js';
