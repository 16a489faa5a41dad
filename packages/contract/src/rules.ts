import * as z from 'zod/mini';
import { LOGO_CONTENT_TYPES, LOGO_MAX_BYTES, MAX_TEXT_LENGTH, MAX_URL_LENGTH, PASSWORD_MIN_LENGTH } from './constants.js';
import { messages } from './messages.js';
import { checkText, text, type TextKind } from './text.js';

/** An email address: letters, digits, ._%+- before @, a domain, a suffix of 2+ letters. */
export const EMAIL_PATTERN = /^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$/;
export const HEX_COLOUR_PATTERN = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;

function parseUrl(value: string): URL | null {
  try {
    return new URL(value);
  } catch {
    return null;
  }
}

export function isHttpUrl(value: string): boolean {
  const url = parseUrl(value);
  return url !== null && (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
}

export function isHttpsUrl(value: string): boolean {
  const url = parseUrl(value);
  return url !== null && url.protocol === 'https:' && url.hostname !== '';
}

export function isMailto(value: string): boolean {
  const url = parseUrl(value);
  return url !== null && url.protocol === 'mailto:' && EMAIL_PATTERN.test(decodeURIComponent(url.pathname));
}

export function isHexColour(value: string): boolean {
  return HEX_COLOUR_PATTERN.test(value);
}

/** A CORS origin as browsers send it: scheme://host[:port], no path, lower-case host. */
export function normaliseOrigin(value: string): string {
  const url = new URL(value);
  return url.origin;
}

/** A required text field (names, …): one line unless `kind` says otherwise; see text.ts. */
export const requiredText = (max = MAX_TEXT_LENGTH, kind: TextKind = 'line') => text({ max, kind });

export const emailSchema = z
  .string({ error: messages.required })
  .check(
    z.trim(),
    z.minLength(1, messages.required),
    checkText(),
    z.maxLength(254, messages.invalidEmail),
    z.regex(EMAIL_PATTERN, messages.invalidEmail),
  );

export const passwordSchema = z
  .string({ error: messages.required })
  .check(
    z.minLength(1, messages.required),
    z.minLength(PASSWORD_MIN_LENGTH, messages.passwordTooShort),
    z.maxLength(1024, messages.tooLong),
    checkText('secret'),
  );

const urlString = (test: (v: string) => boolean, message: string) =>
  z
    .string({ error: messages.required })
    .check(z.trim(), z.minLength(1, messages.required), z.maxLength(MAX_URL_LENGTH, messages.tooLong), checkText(), z.refine(test, message));

export const httpUrlSchema = urlString(isHttpUrl, messages.invalidUrl);
export const secureUrlSchema = urlString(isHttpsUrl, messages.invalidSecureUrl);
export const supportContactSchema = urlString((v) => isHttpUrl(v) || isMailto(v), messages.invalidUrlOrMailto);
export const hexColourSchema = z
  .string({ error: messages.required })
  .check(z.trim(), z.minLength(1, messages.required), z.refine(isHexColour, messages.invalidHexColour));

/** Browser-side check of a chosen logo file; the server checks the bytes again where they arrive. */
export function checkLogoFile(file: { type: string; size: number }): string | null {
  if (!(LOGO_CONTENT_TYPES as readonly string[]).includes(file.type)) return messages.logoWrongType;
  if (file.size >= LOGO_MAX_BYTES) return messages.logoTooBig;
  return null;
}
