import * as z from 'zod/mini';
import { MAX_TEXT_LENGTH } from './constants.js';
import { messages } from './messages.js';
import { emailSchema, requiredText } from './rules.js';
import { idParam } from './text.js';
import { MAX_LOCKS_PER_TILE, tileErrors } from './tile-texts.js';
import { UUID_PATTERN } from './uuid.js';

/**
 * Tiles and sites, shaped as the platform's SDKs send and read them: the headless SDK's
 * TileRequests.kt / NetworkTileResponses.kt / NetworkSiteResponses.kt, and the archived JavaScript SDK's
 * deviceOperation.js (link, delink, getLockFromTile).
 */
const uuidText = (message: string) => z.string({ error: message }).check(z.maxLength(36, message), z.regex(UUID_PATTERN, message));

export const tileParamsSchema = z.object({ tileId: idParam() });
export const deviceTileParamsSchema = z.object({ lockId: idParam(), tileId: idParam() });
export const siteParamsSchema = z.object({ siteId: idParam() });
export const ownerSiteParamsSchema = z.object({ applicationId: idParam(), siteId: idParam() });
export const ownerTileParamsSchema = z.object({ applicationId: idParam(), lockId: idParam(), tileId: idParam() });

/** GET /tile/{tileId} (NetworkTileLocksResponse): the tile's locks the caller may use. */
export const tileLocksSchema = z.object({ siteId: z.string(), tileId: z.string(), deviceIds: z.array(z.string()) });
export type TileLocks = z.infer<typeof tileLocksSchema>;

/** PUT /tile/{tileId} (AssociateMultipleLocksRequest): the tile opens exactly these locks afterwards. */
export const associateTileSchema = z.object({
  siteId: uuidText(tileErrors.siteIdInvalid),
  devices: z.array(uuidText(tileErrors.lockIdInvalid)).check(z.maxLength(MAX_LOCKS_PER_TILE, tileErrors.tooManyLocks)),
});
export type AssociateTile = z.infer<typeof associateTileSchema>;

/** A lock's tile on the owner's lock page. */
export const lockTileSchema = z.object({
  tileId: z.string(),
  /** What the owner calls it ("Front door sticker"); null until named. */
  name: z.nullable(z.string()),
  /** The short URL a phone opens: the portal's /t/{tileId}. */
  url: z.string(),
  /** The other locks the same tile opens (a tile may open several doors). */
  otherLockIds: z.array(z.string()),
  createdAt: z.number(),
});
export type LockTile = z.infer<typeof lockTileSchema>;

/** PUT /platform/application/{id}/lock/{lockId}/tile/{tileId}: names the tile (1–200 characters), or unnames it (null). */
export const tileNameSchema = z.object({ name: z.nullable(requiredText(MAX_TEXT_LENGTH)) });
export type TileName = z.infer<typeof tileNameSchema>;

/**
 * GET /tile/{tileId}/branding, public: what the tile's page shows of the application it belongs to (its
 * name, logo and colour), so the person at the door sees whose door it is before signing in.
 */
export const tileBrandingSchema = z.object({ name: z.string(), logoUrl: z.nullable(z.string()), primaryColour: z.string() });
export type TileBranding = z.infer<typeof tileBrandingSchema>;

/** GET /site (NetworkSiteResponse). Geofence members are 0: Latchkey's sites have no position yet. */
export const siteSchema = z.object({
  id: z.string(),
  name: z.string(),
  colour: z.string(),
  longitude: z.number(),
  latitude: z.number(),
  radius: z.number(),
  passBackground: z.string(),
  /** ISO 8601 */
  created: z.string(),
  updated: z.string(),
});
export type Site = z.infer<typeof siteSchema>;

/** The owner's view of a site: the SDK's shape and the locks in it. */
export const ownerSiteSchema = z.extend(siteSchema, { lockIds: z.array(z.string()) });
export type OwnerSite = z.infer<typeof ownerSiteSchema>;

/** GET /site/{siteId}/user (NetworkUserForSiteResponse). */
export const siteUserSchema = z.object({ userId: z.string(), email: z.string(), displayName: z.nullable(z.string()), orphan: z.boolean() });
export type SiteUser = z.infer<typeof siteUserSchema>;

export const siteNameSchema = z.object({ name: requiredText(MAX_TEXT_LENGTH) });
export type SiteName = z.infer<typeof siteNameSchema>;

/** PUT /platform/application/{id}/lock/{lockId}/site: move the lock into a site, or out of every site (null). */
export const lockSiteSchema = z.object({ siteId: z.nullable(uuidText(tileErrors.siteIdInvalid)) });

/** POST /tile/{tileId}/sign-in: the address a lock was shared with. */
export const tileSignInSchema = z.object({ email: emailSchema });

/** Its answer, the same whether or not a link was sent. */
export const tileSignInSentSchema = z.object({ message: z.string() });

/** POST /tile/sign-in/verify: the secret of the emailed link (`?signin=`). */
export const tileSignInVerifySchema = z.object({
  token: z
    .string({ error: tileErrors.signInLinkInvalid })
    .check(z.minLength(1, messages.required), z.maxLength(200, tileErrors.signInLinkInvalid), z.regex(/^[A-Za-z0-9_-]+$/, tileErrors.signInLinkInvalid)),
});

/** A lock-user token for the application user: the lock-user routes take it as a bearer token. */
export const tileSignInResponseSchema = z.object({
  authToken: z.string(),
  userId: z.string(),
  /** Epoch seconds. */
  expiresAt: z.number(),
});
export type TileSignInResponse = z.infer<typeof tileSignInResponseSchema>;
