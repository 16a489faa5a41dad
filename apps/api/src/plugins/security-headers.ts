import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';
import { isUnder, pathOf } from '../lib/url-paths.js';

/**
 * Security headers on every answer, in two sets recorded once at start-up and set per request in one
 * `reply.headers()` call (@fastify/helmet ran helmet's middleware per request: about 7 % of an
 * authenticated read, docs/performance.md).
 * - Documents (the portal, the API docs page, /cdn): helmet's headers with the given policy.
 * - The API's JSON answers (everything else under the API prefix, the prefix itself included): the set
 *   OWASP's REST Security cheat sheet names for APIs — a CSP that allows nothing and no framing,
 *   `X-Frame-Options: DENY`, `nosniff`, HSTS, CORP and `Cache-Control: no-store`. Helmet's other headers
 *   only mean something to a document a browser renders, and each header costs every answer (measured in
 *   docs/performance.md).
 * A route that needs another policy (the email preview, served logos) sets its own header in its
 * handler, which replaces the default.
 */
export function registerSecurityHeaders(app: FastifyInstance, options: HelmetOptions & { apiPrefix: string }): void {
  const { apiPrefix, ...helmetOptions } = options;
  const documentHeaders = helmetHeaders(helmetOptions);
  const apiHeaders = apiAnswerHeaders(documentHeaders);
  const docsPrefix = `${apiPrefix}/docs`;
  app.addHook('onRequest', (request, reply, done) => {
    const path = pathOf(request.url);
    reply.headers(isUnder(path, apiPrefix) && !isUnder(path, docsPrefix) ? apiHeaders : documentHeaders);
    done();
  });
}

/** An absolute URL's origin (`https://host:port`), or null for anything else. */
function originOf(url: string): string | null {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.origin : null;
  } catch {
    return null;
  }
}

/**
 * The portal's CSP directives. `connect-src` names exactly what the portal calls: its
 * own origin — the API, the live-events stream, the email preview — and, when logos are uploaded
 * elsewhere (S3 presigned PUTs), that one upload origin; never every https origin, so an injected script
 * (were one ever to run) could not send what it reads to a host of its choosing. Images: the origin,
 * data:/blob: (the logo picker's local preview) and the logo CDN.
 */
export function portalCspDirectives(options: { publicUrl: string; cdnBaseUrl: string; uploadBaseUrl: string }): Record<string, string[]> {
  const self = originOf(options.publicUrl);
  const extra = (url: string) => {
    const origin = originOf(url);
    return origin && origin !== self ? [origin] : [];
  };
  return {
    defaultSrc: ["'self'"],
    scriptSrc: ["'self'"],
    // MUI (emotion) injects style elements at run time.
    styleSrc: ["'self'", "'unsafe-inline'"],
    imgSrc: ["'self'", 'data:', 'blob:', ...extra(options.cdnBaseUrl)],
    connectSrc: ["'self'", ...extra(options.uploadBaseUrl)],
    frameSrc: ["'self'"],
    frameAncestors: ["'none'"],
    objectSrc: ["'none'"],
    baseUri: ["'self'"],
    formAction: ["'self'"],
  };
}

/** The API answers' headers; HSTS is the documents' own, so both say the same about transport. */
function apiAnswerHeaders(documentHeaders: Record<string, string>): Record<string, string> {
  return {
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    ...(documentHeaders['strict-transport-security'] ? { 'strict-transport-security': documentHeaders['strict-transport-security'] } : {}),
    'cross-origin-resource-policy': 'same-origin',
    'cache-control': 'no-store',
  };
}

/** The headers helmet sets with these options, recorded from one run of its middleware. */
export function helmetHeaders(options: HelmetOptions): Record<string, string> {
  const recorded: Record<string, string> = {};
  const response = {
    setHeader(name: string, value: string | number | readonly string[]) {
      recorded[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
      return response;
    },
    removeHeader(name: string) {
      delete recorded[name.toLowerCase()];
    },
  };
  let failure: unknown;
  helmet(options)({} as IncomingMessage, response as unknown as ServerResponse, (error?: unknown) => {
    failure = error;
  });
  if (failure) throw failure instanceof Error ? failure : new Error(String(failure));
  return recorded;
}
