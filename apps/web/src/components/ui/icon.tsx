import type { IconDefinition } from '@fortawesome/free-solid-svg-icons';
import type { CSSProperties } from 'react';

interface Props {
  icon: IconDefinition;
  /** Font Awesome's `fa-2x`: twice the surrounding font size. */
  size?: '2x';
}

/**
 * Font Awesome 7's `.svg-inline--fa` rule, inline: one em high, every icon in a 1.25em box (FA 7 is
 * fixed-width by default), sitting on the text baseline like a glyph.
 */
const base: CSSProperties = {
  boxSizing: 'content-box',
  display: 'inline-block',
  height: '1em',
  width: '1.25em',
  overflow: 'visible',
  verticalAlign: '-0.125em',
  fill: 'currentColor',
};
const double: CSSProperties = { ...base, fontSize: '2em' };

/**
 * A Font Awesome icon definition drawn as an inline SVG. `FontAwesomeIcon` gives the same picture but
 * brings the SVG core (≈ 22 KB gzip) and injects its stylesheet at run time. Icons here are decorative:
 * the control around them carries the name, so the SVG is hidden from assistive technology.
 */
export function Icon({ icon, size }: Props) {
  const [width, height, , , pathData] = icon.icon;
  return (
    <svg
      viewBox={`0 0 ${width} ${height}`}
      aria-hidden="true"
      focusable="false"
      style={size === '2x' ? double : base}
    >
      {/* Duotone definitions carry two paths; only solid icons are used, so they are drawn as one shape. */}
      <path d={typeof pathData === 'string' ? pathData : pathData.join(' ')} />
    </svg>
  );
}
