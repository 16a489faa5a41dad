import type { FastifyInstance } from 'fastify';
import { messages } from '@latchkey/contract';
import { AppError } from '../errors.js';

/**
 * The second layer behind the contract: PostgreSQL refuses NUL in text, so a NUL that reached a
 * query was a 500. Every text field of the contract refuses it (packages/contract/src/text.ts); this hook
 * refuses it wherever a route's schema does not look — a path parameter, a query member or a body member
 * no schema names (keys included) — before validation, with the contract's message. Other control
 * characters are the contract's business alone (a mailing address may hold a line break).
 */
export function hasNul(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (value === null || typeof value !== 'object' || depth > 64 || ArrayBuffer.isView(value)) return false;
  if (Array.isArray(value)) return value.some((v) => hasNul(v, depth + 1));
  for (const [key, v] of Object.entries(value)) if (key.includes('\u0000') || hasNul(v, depth + 1)) return true;
  return false;
}

export function registerTextGuard(app: FastifyInstance): void {
  // Callback-style: every request passes here, and a promise per request is a cost of its own.
  app.addHook('preValidation', (request, _reply, done) => {
    done(hasNul(request.params) || hasNul(request.query) || hasNul(request.body) ? new AppError(400, messages.controlCharacters) : undefined);
  });
}
