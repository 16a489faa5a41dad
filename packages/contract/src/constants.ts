/** Business constants and limits, in one place for the API, the portal and the emails. */
export const PASSWORD_MIN_LENGTH = 5;
export const LOGO_MAX_BYTES = 1024 * 1024;
export const LOGO_CONTENT_TYPES = ['image/jpeg', 'image/png'] as const;
export type LogoContentType = (typeof LOGO_CONTENT_TYPES)[number];
/** Logos are stored re-encoded and at most this many pixels on their longer side (larger ones are scaled down). */
export const LOGO_MAX_DIMENSION_PX = 1024;
/** An upload that would decode to more pixels than this is refused before decoding (a decompression bomb). */
export const LOGO_MAX_INPUT_PIXELS = 25_000_000;
export const LOGO_PREVIEW_PX = 150;
export const START_TILE_LOGO_HEIGHT_PX = 64;
export const EMAIL_PREVIEW_WIDTH_PX = 624;
export const EMAIL_PREVIEW_HEIGHT_PX = 882;
export const LOADING_DIALOG_DELAY_MS = 100;
export const TOOLBAR_HEIGHT_PX = 64;
export const OWNER_DIALOG_MIN_WIDTH_PX = 400;
export const OWNER_DIALOG_MAX_WIDTH_PX = 500;
export const CONFIRM_DIALOG_MAX_WIDTH_PX = 500;
export const BREAKPOINTS = { xs: 0, sm: 600, md: 960, lg: 1280, xl: 1920, xxl: 2560 } as const;
export const DEFAULT_PRIMARY_COLOUR = '#00283C';
export const DEFAULT_SECONDARY_COLOUR = '#45BDD1';
export const DEFAULT_CALL_TO_ACTION = {
  headline: 'Need any help?',
  actionText: 'Support',
  actionTarget: 'https://www.latchkey.dev/support',
} as const;
export const SUGGESTED_ACTION_TEXTS = ['Support', 'Get Help'] as const;
/** Geofencing accuracy tiers in metres (named by the spec, unused by the screens shown). */
export const GEOFENCE_ACCURACY_M = { FINE: 10, HIGH: 20, MEDIUM: 100, LOW: 500 } as const;
/** Limits the spec leaves open; chosen so a field can never hold a document. */
export const MAX_TEXT_LENGTH = 200;
export const MAX_ADDRESS_LENGTH = 500;
export const MAX_URL_LENGTH = 2048;
export const MAX_KEYS_PER_APPLICATION = 50;
export const MAX_DOMAINS_PER_APPLICATION = 100;
/** Versioned Accept header of the platform API (plain application/json works too). */
export const API_V2_ACCEPT = 'application/vnd.doordeck.api-v2+json';
/** Languages the portal and its emails are written in; the first is the default. */
export const LANGUAGES = ['en', 'de'] as const;
export type Language = (typeof LANGUAGES)[number];
