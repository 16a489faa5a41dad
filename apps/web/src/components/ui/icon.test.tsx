import { faPlus } from '@fortawesome/free-solid-svg-icons/faPlus';
import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { Icon } from './icon';

describe('Icon', () => {
  it('draws the definition as an inline SVG that assistive technology skips', () => {
    const { container } = render(
      <button type="button">
        <Icon icon={faPlus} />
        Add
      </button>,
    );
    const svg = container.querySelector('svg');
    expect(svg).toHaveAttribute('viewBox', `0 0 ${faPlus.icon[0]} ${faPlus.icon[1]}`);
    expect(svg?.querySelector('path')).toHaveAttribute('d', faPlus.icon[4]);
    expect(svg).toHaveAttribute('aria-hidden', 'true');
    expect(svg).toHaveAttribute('focusable', 'false');
    // Font Awesome 7's own box: one em high, 1.25em wide, a glyph's baseline, the text colour.
    expect(svg?.style).toMatchObject({ height: '1em', width: '1.25em', verticalAlign: '-0.125em', fill: 'currentcolor' });
    expect(screen.getByRole('button')).toHaveAccessibleName('Add');
    expect(screen.queryByRole('img')).toBeNull();
  });

  it('doubles the font size for size="2x" and draws multi-path data as one shape', () => {
    const duotone = { ...faPlus, icon: [512, 512, [], 'f000', ['M0 0h1', 'M2 2h1']] as typeof faPlus.icon };
    const { container } = render(<Icon icon={duotone} size="2x" />);
    const svg = container.querySelector('svg');
    expect(svg?.style.fontSize).toBe('2em');
    expect(svg).toHaveAttribute('viewBox', '0 0 512 512');
    expect(svg?.querySelector('path')).toHaveAttribute('d', 'M0 0h1 M2 2h1');
  });
});
