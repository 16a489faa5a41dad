import { createElement } from 'react';
import type { Language } from '@latchkey/contract';
import { render } from '@react-email/render';
import { BrandedEmail } from './branded-email.js';
import { buildEmailModel } from './model.js';
import { renderText } from './text.js';
import type { EmailBranding, EmailMessage, RenderedEmail } from './types.js';

/** Renders the branded email for sending and for the preview alike (one renderer, so a preview is exactly what is sent). */
export async function renderBrandedEmail(input: { branding: EmailBranding; message: EmailMessage; language?: Language }): Promise<RenderedEmail> {
  const model = buildEmailModel(input.branding, input.message, input.language);
  const html = await render(createElement(BrandedEmail, { model }));
  return { subject: model.subject, html, text: renderText(model) };
}
