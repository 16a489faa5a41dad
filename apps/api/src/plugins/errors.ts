import { createHash } from 'node:crypto';
import type { FastifyError, FastifyInstance } from 'fastify';
import { stdSerializers } from 'pino';
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
 * The logger's `err` serializer (app.ts): a database error is logged as what failed — the statement's first
 * keyword and a short hash of its text, the PostgreSQL error code, the constraint, table and column it
 * names — never the statement itself nor its parameters, which can hold personal data. Drizzle wraps a failed query in an
 * error whose message, `query` and `params` carry the whole statement and every value, PGlite adds
 * `query`/`params` to its own error, and PostgreSQL's `detail` ("Key (email)=(…) already exists") and some
 * messages (`invalid input syntax for type uuid: "…"`) quote values too. Every other error is pino's
 * standard serialization.
 */
export function serializeError(error: Error): SerializedError {
  if (typeof error !== 'object' || error === null) return { type: typeof error, message: String(error), stack: '' };
  return touchesDatabase(error) ? databaseError(error as LoggedError, 0) : stdSerializers.err(error);
}

export interface SerializedError {
  type: string;
  message: string;
  stack: string;
  [field: string]: unknown;
}

interface LoggedError {
  name?: unknown;
  message?: unknown;
  stack?: unknown;
  code?: unknown;
  severity?: unknown;
  query?: unknown;
  params?: unknown;
  cause?: unknown;
  [field: string]: unknown;
}

const SQLSTATE = /^[0-9A-Z]{5}$/;
/** Fields of a PostgreSQL error that name things (identifiers), never values. */
const IDENTIFIER_FIELDS = ['severity', 'schema', 'table', 'column', 'dataType', 'constraint', 'routine'] as const;

function touchesDatabase(error: object): boolean {
  for (let e = error as LoggedError | undefined, i = 0; e && typeof e === 'object' && i < 8; e = e.cause as LoggedError | undefined, i++) {
    if (typeof e.query === 'string' || Array.isArray(e.params)) return true;
    if (typeof e.code === 'string' && SQLSTATE.test(e.code) && typeof e.severity === 'string') return true;
    if (typeof e.message === 'string' && e.message.startsWith('Failed query:')) return true;
  }
  return false;
}

/** `select #3f9a1c0b2d`: enough to find the statement in the code, nothing it carried. */
export function describeStatement(query: string): string {
  const keyword = /^\s*(?:\(\s*)*([A-Za-z]+)/.exec(query)?.[1]?.toLowerCase() ?? 'statement';
  return `${keyword} #${createHash('sha256').update(query).digest('hex').slice(0, 10)}`;
}

function databaseError(e: LoggedError, depth: number): SerializedError {
  // Like pino's: the class (DrizzleQueryError, DatabaseError), which `name` often is not.
  const type = (typeof e.constructor === 'function' && e.constructor.name) || (typeof e.name === 'string' ? e.name : 'Error');
  const code = typeof e.code === 'string' ? e.code : undefined;
  const isPostgres = code !== undefined && SQLSTATE.test(code);
  let message: string;
  if (typeof e.query === 'string' || (typeof e.message === 'string' && e.message.startsWith('Failed query:'))) message = 'Failed query';
  else if (typeof e.message !== 'string') message = '';
  // PostgreSQL's own text, its quoted parts (values, sometimes names) left out: the code says what happened.
  else if (isPostgres) message = e.message.replace(/"(?:[^"]|"")*"/g, '"…"').slice(0, 200);
  else message = e.message.split('\n')[0]!.slice(0, 200);
  // The call sites only: the first lines of a stack repeat the message.
  const stack = typeof e.stack === 'string' ? [`${type}: ${message}`, ...e.stack.split('\n').filter((line) => /^\s+at /.test(line))].join('\n') : '';
  const out: SerializedError = { type, message, stack };
  if (code !== undefined) out.code = code;
  if (typeof e.query === 'string') out.statement = describeStatement(e.query);
  if (Array.isArray(e.params)) out.paramCount = e.params.length;
  if (isPostgres) for (const field of IDENTIFIER_FIELDS) if (typeof e[field] === 'string') out[field] = e[field];
  if (e.cause && typeof e.cause === 'object' && depth < 8) out.cause = databaseError(e.cause as LoggedError, depth + 1);
  return out;
}

/**
 * The one error handler, so every error answers alike: `{ code, message }` everywhere, `errors[]` for validation,
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
      return send(error.statusCode, { code: error.statusCode, message: error.message, ...(error.hint ? { hint: error.hint } : {}) });
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
    if (app.hasDecorator('metrics')) app.metrics.unmatched(request, reply);
    // Only client routes (no file extension) fall back to the portal; a missing file is a 404, not index.html.
    const pathname = request.url.split('?')[0] ?? '';
    const isClientRoute = !/\.[A-Za-z0-9]+$/.test(pathname);
    if (request.url.startsWith(apiPrefix) || request.method !== 'GET' || !isClientRoute || !app.hasDecorator('serveSpa')) {
      return reply.code(404).send({ code: 404, message: apiErrors.notFound } satisfies ErrorBody);
    }
    return (app as FastifyInstance & { serveSpa: (r: typeof reply) => unknown }).serveSpa(reply);
  });
}
