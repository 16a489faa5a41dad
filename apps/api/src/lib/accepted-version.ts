import type { FastifyRequest } from 'fastify';

/**
 * The version an `Accept: application/vnd.doordeck.api-v{n}+json` header asks for (the platform's SDKs
 * send v2 or v3 on some calls); 1 without one.
 */
export function acceptedVersion(request: FastifyRequest): number {
  const match = /application\/vnd\.doordeck\.api-v(\d{1,2})\+json/i.exec(String(request.headers.accept ?? ''));
  return match ? Number(match[1]) : 1;
}
