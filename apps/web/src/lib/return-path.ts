/**
 * Where sign-in returns to: the page a signed-out visitor asked for, carried through /login in a query
 * parameter. Only a path on this origin is taken — never another site (`//evil.com`, `/\evil.com`, an
 * absolute URL, `javascript:`), nor a sign-in screen itself.
 */
export const RETURN_PARAM = 'returnTo';

const BASE = 'https://portal.invalid';
/** The splash screens: returning to one would be a loop, not a return. */
const SIGN_IN_PATHS = ['/login', '/register', '/splash', '/accept-invite'];
/** Where sign-in goes anyway: no need to say so in the URL. */
const DEFAULT_PATHS = ['/', '/start'];

/** The same-origin path (with its query and fragment) `value` names, or null when it is not one. */
export function safeReturnPath(value: string | null | undefined): string | null {
  if (!value || value.length > 2048) return null;
  // One leading slash and then a path: `//host` and `/\host` are other origins to a browser, and a
  // control character (a tab or line break, which URL parsing drops) could turn into one.
  if (!value.startsWith('/') || value.startsWith('//') || value.includes('\\')) return null;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) return null;
  let url: URL;
  try {
    url = new URL(value, BASE);
  } catch {
    return null;
  }
  if (url.origin !== BASE) return null;
  const path = url.pathname.replace(/\/+$/, '') || '/';
  if (SIGN_IN_PATHS.includes(path)) return null;
  return url.pathname + url.search + url.hash;
}

/** The login screen, asked to return to `path` afterwards (plain /login when that is where it goes anyway). */
export function loginReturningTo(path: string): string {
  const target = safeReturnPath(path);
  if (!target || DEFAULT_PATHS.includes(target)) return '/login';
  return `/login?${new URLSearchParams({ [RETURN_PARAM]: target })}`;
}
