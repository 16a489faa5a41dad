/**
 * Nothing in the page may run or load except images; only the portal (same origin) may frame it.
 * No script-src at all: default-src 'none' covers it.
 */
export const PREVIEW_CSP = "default-src 'none'; img-src https: http: data:; style-src 'unsafe-inline'; frame-ancestors 'self'; base-uri 'none'; form-action 'none'";
