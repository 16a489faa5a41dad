import type { EmailModel } from './model.js';

/** The plain-text part, from the same model as the HTML. Links are written out in full. */
export function renderText(model: EmailModel): string {
  const lines: string[] = [model.appName, '', model.heading, ''];
  for (const p of model.paragraphs) lines.push(p, '');
  if (model.code) lines.push(`    ${model.code}`, '');
  if (model.action) lines.push(`${model.action.text}: ${model.action.href}`, '');
  if (model.cta) lines.push('---', model.cta.headline, `${model.cta.text}: ${model.cta.href}`, '');
  lines.push('---', model.footer.companyName);
  if (model.footer.mailingAddress) lines.push(model.footer.mailingAddress);
  if (model.footer.privacyHref) lines.push(`${model.footer.privacyLabel}: ${model.footer.privacyHref}`);
  if (model.footer.supportHref) lines.push(`${model.footer.supportLabel}: ${model.footer.supportHref}`);
  if (model.footer.essentialsLine) lines.push('', model.footer.essentialsLine);
  return lines.join('\n').replace(/\n{3,}/g, '\n\n').trim() + '\n';
}
