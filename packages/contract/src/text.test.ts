import { describe, expect, it } from 'vitest';
import {
  addApplicationUserSchema,
  addIssuerBodySchema,
  applicationUserListQuerySchema,
  certificateRequestSchema,
  changePasswordSchema,
  corsBodySchema,
  createApplicationSchema,
  createLockSchema,
  createLockShareSchema,
  createWebhookSchema,
  deliveryQuerySchema,
  directoryQuerySchema,
  emailPreviewQuerySchema,
  historyQuerySchema,
  issuerBodySchema,
  lockLogQuerySchema,
  loginSchema,
  messages,
  operationSchema,
  registerFormSchema,
  registerSchema,
  removeKeySchema,
  testEmailBodySchema,
  textProblem,
  tokenCheckRequestSchema,
  updateAccountSchema,
  updateApplicationSchema,
  updateLockSchema,
  wizardStepSchemas,
} from './index.js';

type Schema = { safeParse(v: unknown): { success: boolean; error?: { issues: { message: string; path: PropertyKey[] }[] } } };
const USER = '7d4f1f0e-4a5b-4c1d-9e2f-0a1b2c3d4e5f';
const rule = { start: '08:00', end: '17:00', timezone: 'Europe/London', days: ['MONDAY'] };

/** Every request schema of the contract with a valid sample: each string in it is a field a client types. */
const requests: [string, Schema, unknown][] = [
  ['login', loginSchema, { email: 'a@b.co', password: 'secret' }],
  ['register', registerSchema, { email: 'a@b.co', password: 'secret', displayName: 'Ann' }],
  ['register form', registerFormSchema, { email: 'a@b.co', displayName: 'Ann', password: 'secret', repeatPassword: 'secret', agreement: true }],
  ['account', updateAccountSchema, { displayName: 'Ann' }],
  ['password', changePasswordSchema, { oldPassword: 'secret', newPassword: 'secret2' }],
  [
    'create application',
    createApplicationSchema,
    {
      name: 'App',
      companyName: 'Co',
      mailingAddress: 'Road 1',
      privacyPolicy: 'https://a.example/p',
      supportContact: 'mailto:s@a.example',
      appLink: 'https://a.example',
      logoUrl: 'https://cdn.example/x.png',
      emailPreferences: { senderEmail: 's@a.example', senderName: 'Sender', callToAction: { headline: 'Help?', actionText: 'Support', actionTarget: 'https://a.example/s' } },
    },
  ],
  ['update application', updateApplicationSchema, { name: 'App', companyName: 'Co', mailingAddress: 'Road 1' }],
  ['wizard 1', wizardStepSchemas[0], { name: 'App', companyName: 'Co', mailingAddress: 'Road 1' }],
  ['wizard 3', wizardStepSchemas[2], { senderEmail: 's@a.example', senderName: 'Sender', onlySendEssentialEmails: false, callToAction: null }],
  ['directory', directoryQuerySchema, { email: 'a@b.co' }],
  ['issuer', addIssuerBodySchema, { url: 'https://issuer.example' }],
  ['issuer removal', issuerBodySchema, { url: 'https://issuer.example' }],
  ['cors', corsBodySchema, { url: 'https://a.example' }],
  ['email preview', emailPreviewQuerySchema, { ctaHeadline: 'Help?', ctaAbridged: 'Support', ctaTarget: 'https://a.example/s' }],
  ['test email', testEmailBodySchema, { emailPreferences: { senderName: 'Sender', senderEmail: 's@a.example' } }],
  ['lock', createLockSchema, { name: 'Front Door' }],
  ['lock update', updateLockSchema, { name: 'Front Door' }],
  ['share', createLockShareSchema, { email: 'a@b.co' }],
  ['log', lockLogQuerySchema, { cursor: 'abc' }],
  ['users', applicationUserListQuerySchema, { cursor: 'abc', search: 'ann' }],
  ['add user', addApplicationUserSchema, { email: 'a@b.co' }],
  ['token', tokenCheckRequestSchema, { token: 'a.b.c' }],
  ['history', historyQuerySchema, { actor: 'a@b.co', cursor: 'abc' }],
  ['webhook', createWebhookSchema, { url: 'https://hooks.example/x', events: ['lock.unlocked'] }],
  ['deliveries', deliveryQuerySchema, { cursor: 'abc' }],
  ['certificate', certificateRequestSchema, { ephemeralKey: 'AAAA' }],
  ['key removal', removeKeySchema, { kid: 'key-2024-01' }],
  ['add user operation', operationSchema, { type: 'ADD_USER', user: USER, publicKey: 'AAAA' }],
  ['setting operation', operationSchema, { type: 'MUTATE_SETTING', unlockBetween: { ...rule, exceptions: ['2026-12-25'] } }],
];

/** Each string leaf of `value`, with a function that answers a copy of `value` with that leaf replaced. */
function stringLeaves(value: unknown, path: PropertyKey[] = []): { path: PropertyKey[]; text: string; with: (s: string) => unknown }[] {
  if (typeof value === 'string') return [{ path, text: value, with: (s) => s }];
  if (Array.isArray(value))
    return value.flatMap((v, i) => stringLeaves(v, [...path, i]).map((l) => ({ ...l, with: (s: string) => value.map((x, j) => (j === i ? l.with(s) : x)) })));
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => stringLeaves(v, [...path, k]).map((l) => ({ ...l, with: (s: string) => ({ ...value, [k]: l.with(s) }) })));
  return [];
}

/** The fields that are enumerations or fixed formats (a time of day, a zone, a uuid, a type): refused anyway. */
const closedFormat = (path: PropertyKey[]) => path.some((p) => ['type', 'user', 'start', 'end', 'timezone', 'days', 'events'].includes(String(p)));

const C0_C1 = [0x00, 0x01, 0x07, 0x08, 0x0b, 0x0c, 0x1b, 0x1f, 0x7f, 0x80, 0x85, 0x9b, 0x9f].map((c) => String.fromCharCode(c));
const BIDI = ['\u202A', '\u202B', '\u202C', '\u202D', '\u202E', '\u2066', '\u2067', '\u2068', '\u2069', '\u200E', '\u200F', '\u061C'];

describe('text in every request schema', () => {
  it.each(requests)('the %s sample is valid', (_name, schema, sample) => {
    expect(schema.safeParse(sample).error?.issues ?? []).toEqual([]);
  });

  it.each(requests)('%s: NUL and the other C0/C1 controls in any string field are refused', (_name, schema, sample) => {
    for (const leaf of stringLeaves(sample)) {
      // A mailing address may span lines (its own test below); nothing else may.
      const lineBreaks = leaf.path.at(-1) === 'mailingAddress' ? [] : ['\t', '\n', '\r'];
      for (const c of [...C0_C1, ...lineBreaks]) {
        const result = schema.safeParse(leaf.with(`${leaf.text.slice(0, 2)}${c}${leaf.text.slice(2)}x`));
        expect(result.success, `${leaf.path.join('.')} with U+${c.charCodeAt(0).toString(16).padStart(4, '0')}`).toBe(false);
      }
    }
  });

  it.each(requests)('%s: U+2028/U+2029 and bidi controls in any displayed string field are refused', (_name, schema, sample) => {
    for (const leaf of stringLeaves(sample)) {
      if (/password/i.test(String(leaf.path.at(-1)))) continue;
      const separators = leaf.path.at(-1) === 'mailingAddress' ? [] : ['\u2028', '\u2029'];
      for (const c of [...BIDI, ...separators]) {
        const result = schema.safeParse(leaf.with(`${leaf.text.slice(0, 2)}${c}${leaf.text.slice(2)}x`));
        expect(result.success, `${leaf.path.join('.')} with U+${c.charCodeAt(0).toString(16)}`).toBe(false);
        if (!closedFormat(leaf.path)) expect(result.error!.issues.map((i) => i.message)).toContain(c === '\u2028' || c === '\u2029' ? messages.lineBreaks : messages.bidiControls);
      }
    }
  });

  it('names a control character, a line break and a text-direction control in its own words', () => {
    const name = (v: string) => createLockSchema.safeParse({ name: v }).error?.issues[0]?.message ?? null;
    expect(name('Front\u0000Door')).toBe(messages.controlCharacters);
    expect(name('Front\u009bDoor')).toBe(messages.controlCharacters);
    expect(name('Front\nDoor')).toBe(messages.lineBreaks);
    expect(name('Front\u2028Door')).toBe(messages.lineBreaks);
    expect(name('Front \u202Erood')).toBe(messages.bidiControls);
    expect(name('Front Door')).toBeNull();
    // Letters of any script, emoji and joiners are text, not controls.
    expect(name('Vordertür · باب · דלת · 🚪 · 👩‍💻')).toBeNull();
  });

  it('lets a mailing address span lines, but not hold NUL, other controls or bidi controls', () => {
    const address = (v: string) => createApplicationSchema.safeParse({ name: 'App', companyName: 'Co', mailingAddress: v }).error?.issues[0]?.message ?? null;
    expect(address('Road 1\nTown\r\n\tCountry')).toBeNull();
    expect(address('Road 1\u2028Town')).toBeNull();
    expect(address('Road 1\u0000')).toBe(messages.controlCharacters);
    expect(address('Road 1\u001b[31m')).toBe(messages.controlCharacters);
    expect(address('Road \u202E1')).toBe(messages.bidiControls);
  });

  it('lets a password hold any printable character (bidi marks included), never a control character', () => {
    const pw = (v: string) => registerSchema.safeParse({ email: 'a@b.co', password: v }).success;
    expect(pw('pässwörd \u202E ✓')).toBe(true);
    expect(pw('pass\u0000word')).toBe(false);
    expect(textProblem('pass\u0000word', 'secret')).toBe('controlCharacters');
  });
});
