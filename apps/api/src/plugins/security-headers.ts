import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';

/**
 * Helmet's security headers on every answer. The policy is the same for every request, so helmet runs
 * once, at start-up, against a recording response, and each request gets the recorded headers in one
 * `reply.headers()` call. (@fastify/helmet ran helmet's middleware per request: about 7 % of an
 * authenticated read, docs/performance.md.) A route that needs another policy (the email preview, served
 * logos) sets its own header in its handler, which replaces the default.
 */
export function registerSecurityHeaders(app: FastifyInstance, options: HelmetOptions): void {
  const headers = helmetHeaders(options);
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(headers);
    done();
  });
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
