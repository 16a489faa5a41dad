import { describe, expect, it } from 'vitest';
import { theme } from './theme';

/** WCAG 2 contrast ratio of two #RRGGBB colours. */
function contrast(a: string, b: string): number {
  const luminance = (hex: string) => {
    const [r, g, bl] = [1, 3, 5].map((i) => {
      const c = parseInt(hex.slice(i, i + 2), 16) / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    }) as [number, number, number];
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

/** Every colour the theme gives a disabled (read-only) input, label, helper text or checkbox label. */
function readOnlyColours(): string[] {
  const found: string[] = [];
  const walk = (node: unknown, inDisabled: boolean) => {
    if (!node || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      const disabled = inDisabled || key.includes('Mui-disabled');
      if (disabled && key === 'color' && typeof value === 'string') found.push(value);
      walk(value, disabled);
    }
  };
  for (const name of ['MuiInputBase', 'MuiInputLabel', 'MuiFormHelperText', 'MuiFormControlLabel'] as const)
    walk(theme.components?.[name]?.styleOverrides, false);
  return found;
}

describe('theme', () => {
  it('draws read-only values readably: contrast ≥ 4.5:1 on the card, not MUI’s pale disabled grey', () => {
    const colours = readOnlyColours();
    expect(colours).toHaveLength(4);
    for (const colour of colours) expect(contrast(colour, theme.palette.background.paper)).toBeGreaterThanOrEqual(4.5);
  });
});
