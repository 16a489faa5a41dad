import * as z from 'zod/mini';
import { httpUrlSchema } from './rules.js';

/**
 * An auth domain may come with its OpenID configuration. The platform then loads the issuer's
 * key set (`jwks_uri`) through the outbound guard and verifies application-signed tokens against it as
 * well as against the uploaded keys. Uploaded keys may carry an expiry (the JWK member `exp`).
 */

const UNRESERVED = /^[A-Za-z0-9\-._~]$/;
/** RFC 3986 §6.2.2.2: `%7e` and `%7E` are `~`; other escapes in upper case (`%2f` → `%2F`). */
const normalisePercent = (part: string) =>
  part.replace(/%[0-9A-Fa-f]{2}/g, (escape) => {
    const c = String.fromCharCode(parseInt(escape.slice(1), 16));
    return UNRESERVED.test(c) ? c : escape.toUpperCase();
  });

/**
 * An issuer (auth domain, a token's `iss`) in the RFC 3986 normal form, so the same issuer
 * written twice is one: scheme and host in lower case (international names as punycode), the default
 * port dropped, dot segments resolved, percent-escapes normalised (WHATWG `URL` does all but the last),
 * and an empty path written as none (`https://id.example.com/` → `https://id.example.com`, the form most
 * issuers publish and owners type; RFC 3986 §6.2.3 makes the two equal). Other paths keep their trailing
 * slash. null when `value` is not an http(s) URL — such an `iss` matches no auth domain.
 */
export function normaliseIssuerUrl(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return null;
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.hostname === '') return null;
  const credentials = url.username || url.password ? `${url.username}${url.password ? `:${url.password}` : ''}@` : '';
  const rest = normalisePercent(url.pathname) + normalisePercent(url.search) + normalisePercent(url.hash);
  return `${url.protocol}//${credentials}${url.host}${rest === '/' ? '' : rest}`;
}

/** An auth domain as the platform stores and compares it: an http(s) URL, in its normal form. */
export const issuerUrlSchema = z.pipe(
  httpUrlSchema,
  z.transform((url: string) => normaliseIssuerUrl(url) ?? url),
);

/** POST …/auth/issuer: `discovery: true` loads and checks `{url}/.well-known/openid-configuration` first. */
export const addIssuerBodySchema = z.object({
  url: issuerUrlSchema,
  discovery: z.optional(z.boolean()),
});

/** Why an auth domain with discovery was refused (4xx, nothing stored); the outbound guard's reasons too. */
export const discoveryErrors = {
  configNotFound: 'No OpenID configuration was found: the auth domain’s /.well-known/openid-configuration did not answer 200 OK',
  configNotJson: 'The OpenID configuration is not a JSON object',
  issuerMismatch: 'The OpenID configuration is for a different issuer: its "issuer" must equal the auth domain exactly',
  jwksUriMissing: 'The OpenID configuration has no valid "jwks_uri"',
  jwksUriRefused: 'The issuer’s "jwks_uri" cannot be called: it must be an https URL on a public address',
  jwksUnavailable: 'The issuer’s key set ("jwks_uri") could not be loaded',
  jwksInvalid: 'The issuer’s key set is not a JSON Web Key Set',
  jwksNoKeys: 'The issuer’s key set has no public signing key the platform can use',
  /** Re-reading an added domain's configuration failed in a way none of the above names. */
  configUnavailable: 'The OpenID configuration could not be loaded',
  /** Re-reading has failed since the last good read, and that read is older than the longest a configuration is kept (24 h). */
  configExpired: 'The issuer’s OpenID configuration has not been usable for more than 24 hours',
} as const;

/** Per auth domain with discovery: where its keys come from. Keyed by the auth domain (issuer URL). */
export const authDomainDiscoverySchema = z.record(z.string(), z.object({ jwksUri: z.string() }));

/** Which key verified (or would have verified) a token: an uploaded key, or one from the issuer's key set. */
export const keySourceSchema = z.object({
  type: z.enum(['uploaded', 'issuer']),
  kid: z.string(),
  /** Only for `issuer`: the key set it came from, as the issuer's OpenID configuration names it. */
  jwksUri: z.optional(z.string()),
  /**
   * Only for `issuer`, and only when the configuration could not be read again just now: why. The key set
   * is then the last good configuration's, which is used for up to 24 h after it was read.
   */
  configProblem: z.optional(z.string()),
});
export type KeySource = z.infer<typeof keySourceSchema>;

/** The Authentication card warns this many days before an uploaded key expires. */
export const KEY_EXPIRY_WARNING_DAYS = 14;

/** 'expired' at or after `exp`; 'expiring' within the warning window; otherwise 'valid' (also: no `exp`). */
export function keyExpiryState(exp: number | undefined, nowSeconds: number): 'valid' | 'expiring' | 'expired' {
  if (exp === undefined) return 'valid';
  if (exp <= nowSeconds) return 'expired';
  if (exp - nowSeconds <= KEY_EXPIRY_WARNING_DAYS * 24 * 60 * 60) return 'expiring';
  return 'valid';
}
