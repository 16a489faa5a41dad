import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { useOpenedOnce } from './use-opened-once';

describe('useOpenedOnce', () => {
  it('is false until the first opening and stays true after closing', () => {
    function Probe({ open }: { open: boolean }) {
      return <p>{String(useOpenedOnce(open))}</p>;
    }
    const { rerender } = render(<Probe open={false} />);
    expect(screen.getByText('false')).toBeInTheDocument();
    rerender(<Probe open />);
    expect(screen.getByText('true')).toBeInTheDocument();
    rerender(<Probe open={false} />);
    expect(screen.getByText('true')).toBeInTheDocument();
  });
});
