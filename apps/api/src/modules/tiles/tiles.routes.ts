import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  associateTileSchema,
  deviceTileParamsSchema,
  errorBodySchema,
  lockIdParamsSchema,
  lockSchema,
  lockTileSchema,
  ownerTileParamsSchema,
  tileLocksSchema,
  tileErrors,
  tileBrandingSchema,
  tileNameSchema,
  tileParamsSchema,
  tileSignInResponseSchema,
  tileSignInSchema,
  tileSignInSentSchema,
  tileSignInVerifySchema,
} from '@latchkey/contract';
import { pickLanguage } from '@latchkey/email';
import { refuseIfExceeded } from '../../plugins/rate-limit.js';
import { afterReply } from '../account/account-trust.service.js';
import { initiateTileSignIn, verifyTileSignIn } from './tile-sign-in.js';
import { renameLockTile } from './tile-name.js';
import { getTileBranding } from './tile-branding.js';
import {
  adminLock,
  associateTile,
  createLockTile,
  deleteLockTile,
  getTileLockDetails,
  getTileLocks,
  linkTile,
  listLockTiles,
  lockUserActor,
  tileQrSvg,
  unlinkTile,
} from './tiles.service.js';

const security = [{ bearer: [] }];
const E = errorBodySchema;
const errors = { 400: E, 401: E, 403: E, 404: E, 409: E };
/**
 * Sign-in links asked for at tiles, limited as password-reset requests are: per address (many emails from
 * one place) and per email (one inbox flooded).
 */
export const TILE_SIGN_IN_LIMITS = { perAddress: 20, perEmail: 3, windowMs: 3_600_000 } as const;

/**
 * Tiles. Lock users (portal or application-signed tokens): GET /tile/{tileId} and PUT
 * /tile/{tileId} as the headless SDK calls them, PUT/DELETE /device/{lockId}/tile/{tileId} as the archived
 * JavaScript SDK does, and GET /tile/{tileId}/lock for the portal's tile page. Owners: a lock's tiles,
 * a new one, removal, and its printable QR code (SVG). Anyone at the tile: a sign-in link by email for a
 * person one of its locks is shared with, and the link's exchange for a lock-user token.
 */
export async function tilesRoutes(app: FastifyInstance) {
  signInRoutes(app);
  lockUserRoutes(app);
  await sdkLinkRoutes(app);
  ownerRoutes(app);
}

const tags = ['tiles'];

/** Anyone at a tile: a sign-in link by email, and the link's exchange for a lock-user token. */
function signInRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const perAddress = app.createRateLimit({ keyGenerator: (req) => `tile-sign-in-ip:${req.ip}`, max: TILE_SIGN_IN_LIMITS.perAddress, timeWindow: TILE_SIGN_IN_LIMITS.windowMs });
  const perEmail = app.createRateLimit({
    keyGenerator: (req) => `tile-sign-in-email:${String((req.body as { email?: unknown } | undefined)?.email ?? '').trim().toLowerCase()}`,
    max: TILE_SIGN_IN_LIMITS.perEmail,
    timeWindow: TILE_SIGN_IN_LIMITS.windowMs,
  });
  // Using a link: per address (secrets are 256 bits; this only keeps a flood off the database).
  const linkUses = app.createRateLimit({ keyGenerator: (req) => `tile-sign-in-link-ip:${req.ip}`, max: 30, timeWindow: TILE_SIGN_IN_LIMITS.windowMs / 4 });

  app.post(
    '/tile/:tileId/sign-in',
    {
      config: { public: true },
      preHandler: async (request) => {
        refuseIfExceeded(await perAddress(request));
        refuseIfExceeded(await perEmail(request));
      },
      schema: {
        tags,
        summary: 'Emails a single-use sign-in link (15 minutes) if one of the tile’s locks is shared with the address; the answer is the same either way',
        params: tileParamsSchema,
        body: tileSignInSchema,
        response: { 202: tileSignInSentSchema, 400: E, 429: E },
      },
    },
    async (request, reply) => {
      const language = pickLanguage(request.headers['accept-language']);
      // After the answer: an address with no key takes exactly as long as one with a key.
      afterReply(app, () => initiateTileSignIn(app, request.params.tileId, request.body.email, language));
      return reply.code(202).send({ message: tileErrors.signInSent });
    },
  );

  app.post(
    '/tile/sign-in/verify',
    {
      config: { public: true },
      preHandler: async (request) => refuseIfExceeded(await linkUses(request)),
      schema: {
        tags,
        summary: 'Spends an emailed tile sign-in link: a lock-user token (12 hours) for the lock-user routes, as the application user',
        body: tileSignInVerifySchema,
        response: { 200: tileSignInResponseSchema, 400: E, 429: E },
      },
    },
    async (request) => verifyTileSignIn(app, request.body.token),
  );
}

/** Lock users: the tile's locks, associating a tile, its branding (public) and its locks' details. */
function lockUserRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const lockUser = { onRequest: app.authenticateLockUser };
  app.get(
    '/tile/:tileId',
    { ...lockUser, schema: { tags, security, params: tileParamsSchema, response: { 200: tileLocksSchema, 400: E, 401: E, 404: E } } },
    async (request) => getTileLocks(app.db, request.lockUser, request.params.tileId),
  );

  app.put(
    '/tile/:tileId',
    {
      ...lockUser,
      schema: { tags, security, params: tileParamsSchema, body: associateTileSchema, response: { 204: z.null().describe('Done'), ...errors } },
    },
    async (request, reply) => {
      await associateTile(app.db, request.lockUser, request.params.tileId, request.body);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/tile/:tileId/branding',
    {
      config: { public: true },
      schema: { tags, summary: 'The name, logo and colour of the tile’s application, for its page', params: tileParamsSchema, response: { 200: tileBrandingSchema, 400: E, 404: E } },
    },
    async (request) => getTileBranding(app.db, request.params.tileId),
  );

  app.get(
    '/tile/:tileId/lock',
    { ...lockUser, schema: { tags, security, params: tileParamsSchema, response: { 200: z.array(lockSchema), 400: E, 401: E, 404: E } } },
    async (request) => getTileLockDetails(app.db, request.lockUser, request.params.tileId),
  );
}

/**
 * The archived JavaScript SDK's link and delink of a lock and a tile. They send no body (axios `null`), some
 * clients an empty JSON one: whatever comes is ignored.
 */
async function sdkLinkRoutes(app: FastifyInstance) {
  const lockUser = { onRequest: app.authenticateLockUser };
  await app.register(async (scope) => {
    const device = scope.withTypeProvider<ZodTypeProvider>();
    device.removeAllContentTypeParsers();
    device.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 1024 }, (_request, _body, done) => done(null, undefined));
    device.put(
      '/device/:lockId/tile/:tileId',
      { ...lockUser, schema: { tags, security, params: deviceTileParamsSchema, response: { 204: z.null().describe('Linked'), ...errors } } },
      async (request, reply) => {
        const lock = await adminLock(app.db, request.lockUser, request.params.lockId);
        await linkTile(app.db, lock.applicationId, lock.id, request.params.tileId, lockUserActor(request.lockUser));
        return reply.code(204).send(null);
      },
    );
    device.delete(
      '/device/:lockId/tile/:tileId',
      { ...lockUser, schema: { tags, security, params: deviceTileParamsSchema, response: { 204: z.null().describe('Unlinked'), ...errors } } },
      async (request, reply) => {
        const lock = await adminLock(app.db, request.lockUser, request.params.lockId);
        await unlinkTile(app.db, lock.applicationId, lock.id, request.params.tileId, lockUserActor(request.lockUser));
        return reply.code(204).send(null);
      },
    );
  });
}

/** Owners: a lock's tiles, a new one, its name, its removal and its printable QR code. */
function ownerRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const owner = { onRequest: [app.authenticate, app.requireOwner] };
  const publicUrl = app.config.publicUrl;
  const base = '/platform/application/:applicationId/lock/:lockId/tile';
  app.get(
    base,
    { ...owner, schema: { tags, security, params: lockIdParamsSchema, response: { 200: z.array(lockTileSchema), 401: E, 404: E } } },
    async (request) => listLockTiles(app.db, request.params.applicationId, request.params.lockId, publicUrl),
  );

  app.post(
    base,
    { ...owner, schema: { tags, security, params: lockIdParamsSchema, response: { 201: lockTileSchema, 400: E, 401: E, 404: E, 409: E } } },
    async (request, reply) => {
      const tile = await createLockTile(app.db, request.params.applicationId, request.params.lockId, publicUrl, request.user);
      return reply.code(201).send(tile);
    },
  );

  app.delete(
    `${base}/:tileId`,
    { ...owner, schema: { tags, security, params: ownerTileParamsSchema, response: { 204: z.null(), 400: E, 401: E, 404: E } } },
    async (request, reply) => {
      await deleteLockTile(app.db, request.params.applicationId, request.params.lockId, request.params.tileId, request.user);
      return reply.code(204).send(null);
    },
  );

  app.put(
    `${base}/:tileId`,
    { ...owner, schema: { tags, security, params: ownerTileParamsSchema, body: tileNameSchema, summary: 'Names the tile (null: no name)', response: { 200: lockTileSchema, 400: E, 401: E, 404: E } } },
    async (request) => {
      const { applicationId, lockId, tileId } = request.params;
      return renameLockTile(app.db, applicationId, lockId, tileId, request.body, publicUrl, request.user);
    },
  );

  app.get(
    `${base}/:tileId/qr`,
    {
      ...owner,
      schema: { tags, security, params: ownerTileParamsSchema, description: 'The tile’s printable QR code (image/svg+xml) for its short URL', response: { 401: E, 404: E } },
    },
    async (request, reply) => {
      const { applicationId, lockId, tileId } = request.params;
      const svg = await tileQrSvg(app.db, applicationId, lockId, tileId, publicUrl);
      return reply.type('image/svg+xml; charset=utf-8').header('cache-control', 'private, no-store').send(svg as never);
    },
  );
}
