export { renderBrandedEmail } from './render.js';
export { portalBranding } from './portal-branding.js';
export { pickLanguage } from './texts/index.js';
export type { EmailBranding, RenderedEmail } from './types.js';
export { renderAccountEmail, type AccountEmail } from './account-emails.js';
