import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { and, eq, sql } from 'drizzle-orm';
import { apiErrors, isUuid } from '@latchkey/contract';
import type { Db } from '../db/client.js';
import { notFound } from '../errors.js';
import { assertOwner } from '../lib/ownership.js';
import { applicationOwners, applications, sessions } from '../db/schema.js';
import { unauthorized } from '../errors.js';
import type { AccessClaims, TokenService } from '../lib/tokens.js';
import { accessTags, type AccessCache } from '../lib/access-cache.js';

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
    /** The Authorization header's bearer token (null: none), once read (`bearerToken`). */
    bearer: string | null | undefined;
    /** Its claims when this instance verified it before (`knownAccessClaims`), once looked up. */
    knownClaims: AccessClaims | null | undefined;
  }
  interface FastifyInstance {
    authenticate: (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void;
    requireOwner: (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void;
  }
}

/**
 * The request's bearer token (null when it has none), read from the header once: the rate limiter and
 * authentication both need it, and matching a token's few hundred characters is a measurable part of a read.
 */
export function bearerToken(request: FastifyRequest): string | null {
  if (request.bearer !== undefined) return request.bearer;
  const header = request.headers.authorization;
  return (request.bearer = header ? (BEARER.exec(header)?.[1] ?? null) : null);
}
const BEARER = /^Bearer\s+(\S+)$/i;

/**
 * The claims of the request's access token when this instance has verified that token before (TokenService's
 * cache), looked up once per request. Undefined: no token, or one not verified yet (or not an access token).
 */
export function knownAccessClaims(tokens: TokenService, request: FastifyRequest): AccessClaims | undefined {
  if (request.knownClaims === undefined) {
    const token = bearerToken(request);
    request.knownClaims = (token && tokens.verifiedAccess(token)) || null;
  }
  return request.knownClaims ?? undefined;
}

/** What the access cache keeps of one session: its user, and per application the ownership answer. */
interface CachedSession {
  userId: string;
}
interface CachedAccess {
  userId: string;
  owns: boolean;
  version: number | null;
}

/**
 * `onRequest: app.authenticate` on every route that needs a signed-in user. The token must be ours and
 * its session alive: logging out on one instance is seen by all, because the session row is shared and
 * every instance's access cache drops a session as soon as the database announces its change
 * (docs/decisions/0004-access-cache-change-notices.md).
 */
export function registerAuth(app: FastifyInstance, db: Db, tokens: TokenService, cache: AccessCache) {
  app.decorateRequest('user', null as unknown as AuthUser);
  app.decorateRequest('ownsApplication', undefined);
  app.decorateRequest('applicationVersion', null);
  app.decorateRequest('bearer', undefined);
  app.decorateRequest('knownClaims', undefined);
  const { sessionOnly, sessionAndOwner } = prepareAuthStatements(db);

  // Callback-style hook: a request whose token and session are both cached is let through in the same
  // tick, without a promise; anything else takes the async path, which fills both caches.
  app.decorate('authenticate', (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) => {
    let pending: Promise<void> | null;
    try {
      pending = authenticateFromCache(request) ? null : authenticateFromDatabase(request);
    } catch (err) {
      return done(err as Error);
    }
    if (!pending) return done();
    pending.then(() => done(), done);
  });

  /** True when the caches alone let the request through; throws when they alone refuse it. */
  function authenticateFromCache(request: FastifyRequest): boolean {
    if (!bearerToken(request)) throw unauthorized();
    const claims = knownAccessClaims(tokens, request);
    if (!claims) return false;
    const applicationId = applicationIdOf(request);
    const found = cache.get<CachedSession | CachedAccess>(applicationId ? accessKey(claims.sid, applicationId) : sessionKey(claims.sid));
    if (!found) return false;
    admit(request, claims, found);
    return true;
  }

  async function authenticateFromDatabase(request: FastifyRequest): Promise<void> {
    const token = bearerToken(request);
    if (!token) throw unauthorized();
    let claims;
    try {
      claims = await tokens.verifyAccess(token);
    } catch {
      throw unauthorized();
    }
    const applicationId = applicationIdOf(request);
    admit(request, claims, applicationId ? await accessOf(claims.sid, applicationId) : await sessionOf(claims.sid));
  }

  /** The session (null: unknown or revoked) must be the token's user's; ownership rides along if read. */
  function admit(request: FastifyRequest, claims: AccessClaims, found: CachedSession | CachedAccess | null): void {
    if (!found || found.userId !== claims.sub) throw unauthorized();
    if ('owns' in found) {
      request.ownsApplication = found.owns;
      request.applicationVersion = found.version;
    }
    request.user = { id: claims.sub, email: claims.email, sessionId: claims.sid };
  }

  /** The live session's user, read with one statement and kept in the access cache. */
  async function sessionOf(sid: string): Promise<CachedSession | null> {
    const mark = cache.mark();
    const [row] = await sessionOnly.execute({ sid });
    if (!row || row.revokedAt) return null;
    const session = { userId: row.userId };
    cache.set(sessionKey(sid), session, [accessTags.session(sid), accessTags.user(row.userId)], mark);
    return session;
  }

  /** The live session's user with its ownership of the application and that application's version. */
  async function accessOf(sid: string, applicationId: string): Promise<CachedAccess | null> {
    const mark = cache.mark();
    const [row] = await sessionAndOwner.execute({ sid, applicationId });
    if (!row || row.revokedAt) return null;
    const access = { userId: row.userId, owns: row.owns === true, version: row.applicationVersion ?? null };
    cache.set(accessKey(sid, applicationId), access, [accessTags.session(sid), accessTags.user(row.userId), accessTags.application(applicationId)], mark);
    return access;
  }
}

/** The hottest statements of the service (every authenticated request runs one), prepared once per app. */
function prepareAuthStatements(db: Db) {
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
  return { sessionOnly, sessionAndOwner };
}

/** Access cache keys: a session's user, and a session's answer for one application. */
const sessionKey = (sid: string) => `s|${sid}`;
const accessKey = (sid: string, applicationId: string) => `a|${sid}|${applicationId}`;


/**
 * `onRequest: [app.authenticate, app.requireOwner]` on every /platform/application/:applicationId route.
 * It runs before the body is parsed or validated, so a stranger gets the same 404 whatever they send,
 * and never a validation message about an application they cannot see.
 */
export function registerOwnership(app: FastifyInstance, db: Db) {
  app.decorate('requireOwner', (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) => {
    // authenticate answered it already for a well-formed id.
    if (request.ownsApplication !== undefined) return done(request.ownsApplication ? undefined : notFound(apiErrors.applicationNotFound));
    const id = applicationIdOf(request);
    if (!id) return done(notFound(apiErrors.applicationNotFound));
    assertOwner(db, id, request.user.id).then(() => done(), done);
  });
}

/** The route's :applicationId when it is a well-formed id (anything else is a 404 for requireOwner). */
function applicationIdOf(request: FastifyRequest): string | null {
  const id = (request.params as { applicationId?: unknown } | undefined)?.applicationId;
  return typeof id === 'string' && isUuid(id) ? id : null;
}
