import type { FastifyInstance, FastifyRequest } from 'fastify';
import { and, eq, sql } from 'drizzle-orm';
import { apiErrors } from '@latchkey/contract';
import type { Db } from '../db/client.js';
import { notFound } from '../errors.js';
import { assertOwner } from '../lib/ownership.js';
import { applicationOwners, applications, sessions } from '../db/schema.js';
import { unauthorized } from '../errors.js';
import type { TokenService } from '../lib/tokens.js';

export interface AuthUser {
  id: string;
  email: string;
  sessionId: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    user: AuthUser;
    /** Set by `authenticate` on /application/:applicationId routes: whether the caller owns it. */
    ownsApplication: boolean | undefined;
    /** Set with `ownsApplication`: the application's version (null when there is no such application). */
    applicationVersion: number | null;
  }
  interface FastifyInstance {
    authenticate: (request: FastifyRequest) => Promise<void>;
    requireOwner: (request: FastifyRequest) => Promise<void>;
  }
}

export function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  return match?.[1] ?? null;
}

/**
 * `preHandler: app.authenticate` on every route that needs a signed-in user. The token must be ours and
 * its session alive: logging out on one instance is seen by all, because the session row is shared.
 */
export function registerAuth(app: FastifyInstance, db: Db, tokens: TokenService) {
  app.decorateRequest('user', null as unknown as AuthUser);
  app.decorateRequest('ownsApplication', undefined);
  app.decorateRequest('applicationVersion', null);
  // Prepared once: the hottest statements of the service (every authenticated request runs one).
  const sessionOnly = db
    .select({ revokedAt: sessions.revokedAt, userId: sessions.userId })
    .from(sessions)
    .where(eq(sessions.id, sql.placeholder('sid')))
    .limit(1)
    .prepare('auth_session');
  // On application routes the ownership check rides along in the same statement: one round trip, not two.
  const sessionAndOwner = db
    .select({
      revokedAt: sessions.revokedAt,
      userId: sessions.userId,
      owns: sql<boolean>`exists (select 1 from ${applicationOwners} where ${and(
        sql`${applicationOwners.applicationId} = ${sql.placeholder('applicationId')}::uuid`,
        eq(applicationOwners.userId, sessions.userId),
      )})`,
      // Keys the per-instance cache of application bodies (modules/applications/application-cache.ts).
      applicationVersion: sql<number | null>`(select ${applications.version} from ${applications} where ${applications.id} = ${sql.placeholder('applicationId')}::uuid)`,
    })
    .from(sessions)
    .where(eq(sessions.id, sql.placeholder('sid')))
    .limit(1)
    .prepare('auth_session_owner');

  app.decorate('authenticate', async (request: FastifyRequest) => {
    const token = bearerToken(request);
    if (!token) throw unauthorized();
    let claims;
    try {
      claims = await tokens.verifyAccess(token);
    } catch {
      throw unauthorized();
    }
    const applicationId = applicationIdOf(request);
    const [session] = applicationId
      ? await sessionAndOwner.execute({ sid: claims.sid, applicationId })
      : await sessionOnly.execute({ sid: claims.sid });
    if (!session || session.revokedAt || session.userId !== claims.sub) throw unauthorized();
    request.user = { id: claims.sub, email: claims.email, sessionId: claims.sid };
    if (applicationId) {
      const row = session as { owns?: boolean; applicationVersion?: number | null };
      request.ownsApplication = row.owns === true;
      request.applicationVersion = row.applicationVersion ?? null;
    }
  });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * `onRequest: [app.authenticate, app.requireOwner]` on every /platform/application/:applicationId route.
 * It runs before the body is parsed or validated, so a stranger gets the same 404 whatever they send,
 * and never a validation message about an application they cannot see.
 */
export function registerOwnership(app: FastifyInstance, db: Db) {
  app.decorate('requireOwner', async (request: FastifyRequest) => {
    const id = applicationIdOf(request);
    if (!id) throw notFound(apiErrors.applicationNotFound);
    if (request.ownsApplication === undefined) await assertOwner(db, id, request.user.id);
    else if (!request.ownsApplication) throw notFound(apiErrors.applicationNotFound);
  });
}

/** The route's :applicationId when it is a well-formed id (anything else is a 404 for requireOwner). */
function applicationIdOf(request: FastifyRequest): string | null {
  const id = (request.params as { applicationId?: unknown } | undefined)?.applicationId;
  return typeof id === 'string' && UUID.test(id) ? id : null;
}
