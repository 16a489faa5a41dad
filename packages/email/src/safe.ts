import { DEFAULT_PRIMARY_COLOUR, DEFAULT_SECONDARY_COLOUR, isHexColour, isHttpUrl, isMailto } from '@latchkey/contract';

/**
 * The renderer trusts nothing it is given: stored values passed the API's rules once, but the preview
 * also takes query overrides, and a rule may change after a value was stored. So every colour and URL
 * is checked again here, where it becomes markup.
 */

/** A hex colour as given, or the fallback. Anything else (names, `url(...)`, `;`) never reaches a style. */
export function safeColour(value: string | null | undefined, fallback: string): string {
  const v = value?.trim();
  return v && isHexColour(v) ? v : fallback;
}

export const safePrimary = (value: string | null | undefined) => safeColour(value, DEFAULT_PRIMARY_COLOUR);
export const safeSecondary = (value: string | null | undefined) => safeColour(value, DEFAULT_SECONDARY_COLOUR);

/** A link target: http(s) or mailto only, otherwise null (and the link is left out). */
export function safeHref(value: string | null | undefined): string | null {
  const v = value?.trim();
  if (!v) return null;
  return isHttpUrl(v) || isMailto(v) ? v : null;
}

/** An image source: http(s) only. */
export function safeImageSrc(value: string | null | undefined): string | null {
  const v = value?.trim();
  return v && isHttpUrl(v) ? v : null;
}

/** Text that ends up in a mail header: one line, bounded. */
export function oneLine(value: string, max = 200): string {
  return value.replace(/[\r\n\t\u2028\u2029]+/g, ' ').trim().slice(0, max);
}

/** Black or white, whichever reads better on the given hex background (WCAG relative luminance). */
export function readableTextOn(hex: string): '#FFFFFF' | '#111111' {
  let h = hex.slice(1);
  if (h.length === 3) h = h.replace(/./g, (c) => c + c);
  const channel = (i: number) => {
    const c = parseInt(h.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  const l = 0.2126 * channel(0) + 0.7152 * channel(2) + 0.0722 * channel(4);
  // Contrast against white is (1.05)/(l+0.05); against near-black (l+0.05)/(0.0056+0.05).
  return 1.05 / (l + 0.05) >= (l + 0.05) / 0.0556 ? '#FFFFFF' : '#111111';
}
