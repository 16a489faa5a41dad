/** What stands in a log line or a span for a value that is not written down. */
export const REDACTED = 'REDACTED';

/**
 * A request URL as logs and traces may record it: its path, with any segment that names an email address
 * (`/share/invite/{email}`) replaced, and of its query string only the parameters' names. A query value is
 * where a one-time secret travels when a client puts it in the URL (an emailed link's code or token, an
 * upload URL's signature, an SDK's `?code=`): whoever reads the log must not be able to use it. A parameter
 * without a value (`?secret`) is replaced whole, since its name may be the secret.
 */
export function redactUrl(url: string): string {
  const queryAt = url.indexOf('?');
  const path = redactPath(queryAt === -1 ? url : url.slice(0, queryAt));
  if (queryAt === -1) return path;
  const query = url.slice(queryAt + 1);
  if (query === '') return path;
  return `${path}?${redactQuery(query)}`;
}

/** A path with every segment that names an email address (an `@`, plain or percent-encoded) replaced. */
export function redactPath(path: string): string {
  if (!path.includes('@') && !/%40/i.test(path)) return path;
  return path
    .split('/')
    .map((segment) => (segment.includes('@') || /%40/i.test(segment) ? REDACTED : segment))
    .join('/');
}

/** A query string (without its `?`): each parameter's name kept, its value replaced. */
export function redactQuery(query: string): string {
  return query
    .split('&')
    .filter((part) => part !== '')
    .map((part) => {
      const equals = part.indexOf('=');
      return equals === -1 ? REDACTED : `${part.slice(0, equals)}=${REDACTED}`;
    })
    .join('&');
}
