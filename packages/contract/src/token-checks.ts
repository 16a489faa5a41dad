/**
 * The token tester's checks, in the order they run; the tester shows them as steps. Kept apart from the
 * platform-user schemas: the portal's string table imports the labels, and a module's schemas are built
 * wherever any of its exports is used, so next to them the portal's entry would build them all.
 */
export const TOKEN_CHECK_IDS = ['decode', 'issuer', 'key', 'algorithm', 'signature', 'audience', 'times', 'subject'] as const;
export type TokenCheckId = (typeof TOKEN_CHECK_IDS)[number];

export const TOKEN_CHECK_LABELS: Record<TokenCheckId, string> = {
  decode: 'Header and claims decoded',
  issuer: 'Issuer matches a registered auth domain',
  key: 'Key id matches a registered key',
  algorithm: 'Algorithm fits the key',
  signature: 'Signature',
  audience: 'Audience',
  times: 'Expiry, issued-at and not-before',
  subject: 'Subject',
};
