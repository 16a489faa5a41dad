import type { FastifyError, FastifyInstance } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { apiErrors, type ErrorBody } from '@latchkey/contract';
import { AppError } from '../errors.js';

/** Errors that mean "the database is not reachable right now": answered 503, never 500. */
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P02', '57P03', '53300']);
function isDatabaseUnavailable(error: unknown): boolean {
  for (let e = error as { code?: unknown; message?: unknown; cause?: unknown } | undefined, i = 0; e && i < 5; e = e.cause as typeof e, i++) {
    const code = typeof e.code === 'string' ? e.code : '';
    if (UNAVAILABLE_CODES.has(code) || code.startsWith('08')) return true;
    const message = typeof e.message === 'string' ? e.message : '';
    if (/Connection terminated|timeout exceeded when trying to connect|Query read timeout|Connection is closed/i.test(message)) return true;
  }
  return false;
}

/**
 * The one error handler (house style 9): `{ code, message }` everywhere, `errors[]` for validation,
 * 5xx detail only in the log.
 */
export function registerErrorHandling(app: FastifyInstance, apiPrefix: string) {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const send = (status: number, body: ErrorBody) => reply.code(status).type('application/json').send(body);

    if (hasZodFastifySchemaValidationErrors(error)) {
      const errors = error.validation.map((v) => ({
        path: [error.validationContext, ...v.instancePath.split('/').filter(Boolean)].join('.'),
        message: v.message ?? apiErrors.validation,
      }));
      return send(400, { code: 400, message: errors[0]?.message ?? apiErrors.validation, errors });
    }
    if (error instanceof AppError) {
      reply.headers(error.headers);
      return send(error.statusCode, { code: error.statusCode, message: error.message });
    }
    if (isResponseSerializationError(error)) {
      request.log.error({ err: error }, 'response did not match its schema');
      return send(500, { code: 500, message: apiErrors.internal });
    }
    if (isDatabaseUnavailable(error)) {
      request.log.warn({ err: error }, 'database unavailable');
      return send(503, { code: 503, message: apiErrors.serviceUnavailable });
    }
    const status = error.statusCode ?? 500;
    if (status === 413) return send(413, { code: 413, message: apiErrors.payloadTooLarge });
    if (status === 415) return send(415, { code: 415, message: apiErrors.unsupportedMediaType });
    if (status === 429) return send(429, { code: 429, message: apiErrors.tooManyAttempts });
    if (status >= 400 && status < 500) {
      // Fastify's own client errors (bad JSON, empty body with a JSON type …): their text is safe and useful.
      return send(status, { code: status, message: error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ? 'Body is not valid JSON' : error.message });
    }
    request.log.error({ err: error }, 'unhandled error');
    return send(500, { code: 500, message: apiErrors.internal });
  });

  app.setNotFoundHandler((request, reply) => {
    // Only client routes (no file extension) fall back to the portal; a missing file is a 404, not index.html.
    const pathname = request.url.split('?')[0] ?? '';
    const isClientRoute = !/\.[A-Za-z0-9]+$/.test(pathname);
    if (request.url.startsWith(apiPrefix) || request.method !== 'GET' || !isClientRoute || !app.hasDecorator('serveSpa')) {
      return reply.code(404).send({ code: 404, message: apiErrors.notFound } satisfies ErrorBody);
    }
    return (app as FastifyInstance & { serveSpa: (r: typeof reply) => unknown }).serveSpa(reply);
  });
}
