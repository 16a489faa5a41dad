import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { and, eq } from 'drizzle-orm';
import { platformUserErrors } from '@latchkey/contract';
import { applicationUsers } from '../db/schema.js';
import { unauthorized } from '../errors.js';
import { accessTags, type AccessCache } from '../lib/access-cache.js';
import { verifyApplicationToken } from '../lib/third-party-tokens.js';
import { upsertFromToken } from '../modules/platform-users/platform-users.service.js';
import { bearerToken } from './auth.js';

/**
 * Who operates a lock: a portal user (the application's owners, admins of all its locks) signed in with
 * a portal access token, or an application user proven by a token the application's own backend signed
 * (registered on the application), created on first use. Both ids are UUIDs; certificates and operations carry them.
 */
export interface LockUser {
  kind: 'portal' | 'application';
  id: string;
  /** The application an application user belongs to; null for portal users. */
  applicationId: string | null;
  email: string | null;
  displayName: string | null;
  /** Signed in at a tile (a lock-user token): its powers last only while the user holds a share (shares.service.ts). */
  tile?: true;
}

declare module 'fastify' {
  interface FastifyRequest {
    lockUser: LockUser;
  }
  interface FastifyInstance {
    /** `onRequest` of GET /account, POST /auth/certificate and /device/*: either kind of user token. */
    authenticateLockUser: (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void;
  }
}

interface CachedApplicationUser {
  user: LockUser;
  /** The token's exp, epoch seconds. */
  exp: number;
}

/**
 * Application-signed tokens are full user tokens only on the routes that take this hook; everywhere else
 * (`/platform/*`, password, refresh) `app.authenticate` accepts portal tokens alone. Which verifier runs
 * is chosen by the unverified `iss` claim; the chosen one then checks everything, so the choice grants
 * nothing. A verified application token is kept in the access cache until it expires, tagged with its
 * application: removing a key or an issuer changes the application, and its notice drops the entry on
 * every instance.
 */
export function registerLockUserAuth(app: FastifyInstance, cache: AccessCache) {
  app.decorateRequest('lockUser', null as unknown as LockUser);
  const portalIssuer = app.config.jwt.issuer;
  // A tile sign-in is a key to doors, not an account: the account's own route does not take it.
  const accountRoute = `${app.config.apiPrefix}/account`;

  app.decorate('authenticateLockUser', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const token = bearerToken(request);
    if (!token) return done(unauthorized());
    if (unverifiedIssuer(token) === portalIssuer) {
      if (unverifiedClaims(token)?.typ === 'lock-user') {
        if (request.routeOptions.url === accountRoute) return done(unauthorized());
        const known = cachedApplicationUser(cache, token);
        if (known) {
          request.lockUser = known;
          return done();
        }
        // Not returned: a hook that returns a promise is continued by Fastify as well as by `done`, which
        // would run the route twice.
        void signedInAtTile(token).then((user) => {
          request.lockUser = user;
          done();
        }, done);
        return;
      }
      return app.authenticate(request, reply, (error?: Error) => {
        if (error) return done(error);
        request.lockUser = { kind: 'portal', id: request.user.id, applicationId: null, email: request.user.email, displayName: null };
        done();
      });
    }
    const cached = cachedApplicationUser(cache, token);
    if (cached) {
      request.lockUser = cached;
      return done();
    }
    applicationUser(token, request).then((user) => {
      request.lockUser = user;
      done();
    }, done);
  });

  async function applicationUser(token: string, request: FastifyRequest): Promise<LockUser> {
    const mark = cache.mark();
    const { report, identity, keyExpiresAt } = await verifyApplicationToken(app.db, token, { ...app.config.platformTokens, issuers: app.issuers, log: request.log });
    if (!identity) throw unauthorized(report.error ?? platformUserErrors.tokenMissing);
    const row = await upsertFromToken(app.db, identity);
    const user: LockUser = { kind: 'application', id: row.userId, applicationId: identity.applicationId, email: row.email, displayName: row.displayName };
    // Kept no longer than the token, nor than the key that verified it (an uploaded key's `exp`).
    const tokenExp = report.claims?.exp;
    const exp = typeof tokenExp === 'number' && keyExpiresAt !== null ? Math.min(tokenExp, keyExpiresAt) : tokenExp;
    if (typeof exp === 'number') cache.set(cacheKey(token), { user, exp } satisfies CachedApplicationUser, [accessTags.application(identity.applicationId)], mark);
    return user;
  }

  /**
   * A lock-user token (tiles' sign-in): the platform's signature and `typ`, and its application user still
   * there. A pending user stays pending (no `sub`): their application's backend may still claim them.
   */
  async function signedInAtTile(token: string): Promise<LockUser> {
    const mark = cache.mark();
    const claims = await app.tokens.verifyLockUser(token).catch(() => null);
    if (!claims) throw unauthorized();
    const [row] = await app.db
      .select({ id: applicationUsers.id, email: applicationUsers.email, displayName: applicationUsers.displayName })
      .from(applicationUsers)
      .where(and(eq(applicationUsers.id, claims.sub), eq(applicationUsers.applicationId, claims.app)))
      .limit(1);
    if (!row) throw unauthorized();
    const user: LockUser = { kind: 'application', id: row.id, applicationId: claims.app, email: row.email, displayName: row.displayName, tile: true };
    cache.set(cacheKey(token), { user, exp: claims.exp } satisfies CachedApplicationUser, [accessTags.application(claims.app)], mark);
    return user;
  }
}

const cacheKey = (token: string) => `lu|${token}`;

/** The application user of an application-signed token verified before and not yet expired; no verification, no query. */
export function cachedApplicationUser(cache: AccessCache, token: string): LockUser | null {
  const cached = cache.get<CachedApplicationUser>(cacheKey(token));
  return cached && cached.exp > Date.now() / 1000 ? cached.user : null;
}

/** The `iss` claim, read without trusting it: only to pick the verifier. */
export function unverifiedIssuer(token: string): string | null {
  const iss = unverifiedClaims(token)?.iss;
  return typeof iss === 'string' ? iss : null;
}

/** A token's claims, read without trusting them: only to pick the verifier. */
function unverifiedClaims(token: string): Record<string, unknown> | null {
  const payload = token.split('.')[1];
  if (!payload) return null;
  try {
    const claims: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    return claims && typeof claims === 'object' ? (claims as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
