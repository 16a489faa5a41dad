import { describe, expect, it } from 'vitest';
import {
  checkLogoFile,
  emailSchema,
  hexColourSchema,
  httpUrlSchema,
  LOGO_MAX_BYTES,
  messages,
  normaliseOrigin,
  passwordSchema,
  secureUrlSchema,
  supportContactSchema,
} from './index.js';

function messageOf(schema: { safeParse(v: unknown): { success: boolean; error?: { issues: { message: string }[] } } }, value: unknown) {
  const r = schema.safeParse(value);
  return r.success ? null : r.error!.issues[0]!.message;
}

describe('lock rules (time windows, locations, unlock times)', () => {
  it.each(['a@b.co', 'first.last+tag@sub.example.org', 'X_Y%z-1@host-name.io'])('accepts email %s', (v) => {
    expect(messageOf(emailSchema, v)).toBeNull();
  });
  it.each(['', 'plain', 'a@b', 'a@b.c', 'a b@c.com', 'a@b.c0m', '@b.com'])('refuses email %j', (v) => {
    expect(messageOf(emailSchema, v)).toBe(v === '' ? messages.required : messages.invalidEmail);
  });

  it('needs passwords of at least 5 characters', () => {
    expect(messageOf(passwordSchema, 'abcde')).toBeNull();
    expect(messageOf(passwordSchema, 'abcd')).toBe(messages.passwordTooShort);
    expect(messageOf(passwordSchema, '')).toBe(messages.required);
  });

  it.each(['http://example.com', 'https://example.com/privacy?x=1'])('accepts http(s) URL %s', (v) => {
    expect(messageOf(httpUrlSchema, v)).toBeNull();
  });
  it.each(['example.com', 'ftp://example.com', 'javascript:alert(1)', 'mailto:a@b.co', 'https://'])('refuses URL %j', (v) => {
    expect(messageOf(httpUrlSchema, v)).toBe(messages.invalidUrl);
  });

  it('accepts support contact as http(s) or mailto', () => {
    expect(messageOf(supportContactSchema, 'mailto:help@example.com')).toBeNull();
    expect(messageOf(supportContactSchema, 'https://example.com/help')).toBeNull();
    expect(messageOf(supportContactSchema, 'mailto:nobody')).toBe(messages.invalidUrlOrMailto);
    expect(messageOf(supportContactSchema, 'tel:123')).toBe(messages.invalidUrlOrMailto);
  });

  it('accepts only https for CORS', () => {
    expect(messageOf(secureUrlSchema, 'https://app.example.com')).toBeNull();
    expect(messageOf(secureUrlSchema, 'http://app.example.com')).toBe(messages.invalidSecureUrl);
  });

  it('normalises origins', () => {
    expect(normaliseOrigin('https://App.Example.com/some/path?q')).toBe('https://app.example.com');
    expect(normaliseOrigin('https://example.com:443/')).toBe('https://example.com');
  });

  it.each(['#fff', '#FFFFFF', '#00283C'])('accepts hex colour %s', (v) => {
    expect(messageOf(hexColourSchema, v)).toBeNull();
  });
  it.each(['fff', '#ffff', '#12', '#gggggg', 'red', '#fff;background:url(x)'])('refuses colour %j', (v) => {
    expect(messageOf(hexColourSchema, v)).toBe(messages.invalidHexColour);
  });

  it('checks logo files by type and size', () => {
    expect(checkLogoFile({ type: 'image/png', size: 1000 })).toBeNull();
    expect(checkLogoFile({ type: 'image/jpeg', size: LOGO_MAX_BYTES - 1 })).toBeNull();
    expect(checkLogoFile({ type: 'image/gif', size: 10 })).toBe(messages.logoWrongType);
    expect(checkLogoFile({ type: 'image/svg+xml', size: 10 })).toBe(messages.logoWrongType);
    expect(checkLogoFile({ type: 'image/png', size: LOGO_MAX_BYTES })).toBe(messages.logoTooBig);
  });
});
