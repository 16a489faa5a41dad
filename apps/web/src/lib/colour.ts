import { isHexColour } from '@latchkey/contract';

function channels(hex: string): [number, number, number] {
  let h = hex.slice(1);
  if (h.length === 3) h = [...h].map((c) => c + c).join('');
  return [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16) / 255) as [number, number, number];
}

/** WCAG relative luminance, to pick black or white text over a user-chosen colour. */
function luminance(hex: string): number {
  const [r, g, b] = channels(hex).map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4)) as [
    number,
    number,
    number,
  ];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

export function readableTextOn(hex: string): '#000000' | '#FFFFFF' {
  if (!isHexColour(hex)) return '#FFFFFF';
  // White wins when its contrast ratio against the colour beats black's.
  const l = luminance(hex);
  return (1.05 / (l + 0.05) >= (l + 0.05) / 0.05 ? '#FFFFFF' : '#000000');
}

/** Expands #abc to #aabbcc: <input type=color> only accepts the six-digit form. */
export function toSixDigitHex(hex: string): string {
  if (!isHexColour(hex)) return '#000000';
  return hex.length === 4 ? '#' + [...hex.slice(1)].map((c) => c + c).join('') : hex;
}
