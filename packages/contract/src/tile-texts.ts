/**
 * Tiles and sites: limits and the API's texts. No schemas here, so the portal's string table imports the
 * texts without building any (the schemas are in tiles-sites.ts).
 */
export const MAX_LOCKS_PER_TILE = 50;
export const MAX_TILES_PER_LOCK = 20;
export const MAX_SITES_PER_APPLICATION = 50;
/** A site's colour when it has none of its own (the SDK's site shape has no null colour). */
export const DEFAULT_SITE_COLOUR = '#00283C';
/**
 * Signing in at a tile: a person a lock is shared with (an application user, not a portal account) asks
 * for a one-time link by email on the tile's page; the link signs them in as that application user for
 * LOCK_USER_TOKEN_TTL_HOURS. The link lives TILE_SIGN_IN_TTL_MINUTES and works once.
 */
export const TILE_SIGN_IN_TTL_MINUTES = 15;
export const LOCK_USER_TOKEN_TTL_HOURS = 12;

export const tileErrors = {
  noDevices: 'No devices associated with this tile',
  tileIdInvalid: 'A tile id is a UUID',
  lockIdInvalid: 'A lock id is a UUID',
  siteIdInvalid: 'A site id is a UUID',
  alreadyLinked: 'This tile is already linked to this lock',
  notLinked: 'This tile is not linked to this lock',
  otherApplication: 'This tile opens locks of another application',
  tooManyLocks: `A tile can open at most ${MAX_LOCKS_PER_TILE} locks`,
  tooManyTiles: `A lock can have at most ${MAX_TILES_PER_LOCK} tiles`,
  duplicateLock: 'A lock is listed twice',
  notAdmin: 'Only an admin of a lock can link tiles to it',
  lockNotInSite: 'Every lock must be in the site given',
  signInSent: `If this address has a key to a door behind this code, a sign-in link is on its way. It works once, for ${TILE_SIGN_IN_TTL_MINUTES} minutes.`,
  signInLinkInvalid: 'This sign-in link is not valid. Ask for a new one at the door.',
  signInLinkUsed: 'This sign-in link was used already. Ask for a new one at the door.',
  signInLinkExpired: 'This sign-in link has expired. Ask for a new one at the door.',
} as const;

export const siteErrors = {
  siteNotFound: 'Site not found',
  tooManySites: `An application can have at most ${MAX_SITES_PER_APPLICATION} sites`,
  nameTaken: 'This application already has a site with this name',
} as const;
