import { describe, expect, it } from 'vitest';
import { authErrorFor, deriveLogoUrl, messages, registerFormSchema, updateApplicationSchema, wizardStepSchemas } from './index.js';

describe('register form', () => {
  const base = { email: 'a@b.co', displayName: 'Ann', password: 'abcde', repeatPassword: 'abcde', agreement: true };
  it('accepts a complete form', () => expect(registerFormSchema.safeParse(base).success).toBe(true));
  it('needs matching passwords', () => {
    const r = registerFormSchema.safeParse({ ...base, repeatPassword: 'abcdf' });
    expect(r.error?.issues[0]).toMatchObject({ message: messages.passwordsNotMatching, path: ['repeatPassword'] });
  });
  it('reports a mismatch alongside the other fields\' messages', () => {
    const r = registerFormSchema.safeParse({ ...base, password: 'abc', repeatPassword: 'abcd', agreement: false });
    const messagesByPath = Object.fromEntries((r.error?.issues ?? []).map((i) => [i.path.join('.'), i.message]));
    expect(messagesByPath).toMatchObject({
      password: messages.passwordTooShort,
      repeatPassword: messages.passwordsNotMatching,
      agreement: messages.agreementRequired,
    });
  });
  it('needs the agreement', () => {
    expect(registerFormSchema.safeParse({ ...base, agreement: false }).error?.issues[0]?.message).toBe(messages.agreementRequired);
  });
});

describe('error catalogue', () => {
  it.each([
    [0, 'No internet connection'],
    [500, 'No internet connection'],
    [401, 'Wrong credentials'],
    [403, 'Wrong credentials'],
    [409, 'Account already exists'],
    [422, 'You have a pending Invite'],
    [418, 'Something went wrong'],
  ])('status %i → %s', (status, title) => expect(authErrorFor(status).title).toBe(title));
});

describe('application update', () => {
  it('lets optional fields be cleared with null but not required ones', () => {
    expect(updateApplicationSchema.safeParse({ appLink: null }).success).toBe(true);
    expect(updateApplicationSchema.safeParse({ name: null }).success).toBe(false);
    expect(updateApplicationSchema.safeParse({ name: '  ' }).error?.issues[0]?.message).toBe(messages.required);
  });
  it('ignores unknown fields', () => {
    expect(updateApplicationSchema.parse({ name: 'x', owners: ['y'] })).toEqual({ name: 'x' });
  });
  it('wizard step 2 allows an empty app link but not a bad one', () => {
    const ok = { privacyPolicy: 'https://a.io/p', supportContact: 'mailto:s@a.io', appLink: '' };
    expect(wizardStepSchemas[1].safeParse(ok).success).toBe(true);
    expect(wizardStepSchemas[1].safeParse({ ...ok, appLink: 'nope' }).success).toBe(false);
  });
});

describe('logo URL derivation', () => {
  const cfg = { uploadBaseUrl: 'http://localhost:3000/api/uploads', cdnBaseUrl: 'http://localhost:3000/cdn' };
  it('swaps the upload base for the CDN base and drops the query', () => {
    expect(deriveLogoUrl('http://localhost:3000/api/uploads/logos/a/b.png?sig=1&expires=2', cfg)).toBe(
      'http://localhost:3000/cdn/logos/a/b.png',
    );
  });
  it('refuses URLs outside the upload base', () => {
    expect(() => deriveLogoUrl('http://evil.test/logos/a.png', cfg)).toThrow();
  });
});
