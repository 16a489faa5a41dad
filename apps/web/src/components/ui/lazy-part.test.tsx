import { act, render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useState, type ComponentType } from 'react';
import { describe, expect, it, vi } from 'vitest';
import { lazyPart, usePreloadWhenIdle } from './lazy-part';

function Greeting({ name }: { name: string }) {
  const [text, setText] = useState('');
  return (
    <label>
      Hello {name}
      <input value={text} onChange={(e) => setText(e.target.value)} />
    </label>
  );
}

/** A load that resolves (or fails) when the test says. */
function controlledLoad() {
  let resolve = (_c: ComponentType<{ name: string }>) => {};
  let reject = (_e: Error) => {};
  const load = vi.fn(
    () =>
      new Promise<ComponentType<{ name: string }>>((res, rej) => {
        resolve = res;
        reject = rej;
      }),
  );
  return { load, resolve: (c = Greeting) => resolve(c), reject: (e: Error) => reject(e) };
}

describe('lazyPart', () => {
  it('draws nothing until its code is in, then the part', async () => {
    const { load, resolve } = controlledLoad();
    const Part = lazyPart(load);
    render(<Part name="Ada" />);
    expect(screen.queryByText(/Hello/)).toBeNull();
    await act(async () => resolve());
    expect(await screen.findByLabelText('Hello Ada')).toBeInTheDocument();
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('once preloaded, draws the part in the same render as its opener', async () => {
    const Part = lazyPart(async () => Greeting);
    await Part.preload();
    function Opener() {
      const [open, setOpen] = useState(false);
      return (
        <>
          <button onClick={() => setOpen(true)}>open</button>
          {open && <Part name="Ada" />}
        </>
      );
    }
    render(<Opener />);
    await userEvent.setup().click(screen.getByRole('button', { name: 'open' }));
    // No wait: the part is there in the click's own render.
    expect(screen.getByLabelText('Hello Ada')).toBeInTheDocument();
  });

  it('a part drawn while its code was loading keeps what was typed when its page draws again', async () => {
    const { load, resolve } = controlledLoad();
    const Part = lazyPart(load);
    const { rerender } = render(<Part name="Ada" />);
    await act(async () => resolve());
    const u = userEvent.setup();
    await u.type(await screen.findByLabelText('Hello Ada'), '123');
    rerender(<Part name="Grace" />);
    expect(screen.getByLabelText('Hello Grace')).toHaveValue('123');
  });

  it('a load that failed is tried again by the next preload', async () => {
    const first = controlledLoad();
    const load = vi.fn(first.load);
    const Part = lazyPart(load);
    const failed = Part.preload();
    first.reject(new Error('offline'));
    await expect(failed).rejects.toThrow('offline');
    load.mockImplementation(async () => Greeting);
    await Part.preload();
    render(<Part name="Ada" />);
    expect(screen.getByLabelText('Hello Ada')).toBeInTheDocument();
    expect(load).toHaveBeenCalledTimes(2);
  });
});

describe('usePreloadWhenIdle', () => {
  it('fetches nothing until `when` holds, then each part in turn, the next once the one before is in', async () => {
    vi.useFakeTimers();
    try {
      const a = controlledLoad();
      const b = controlledLoad();
      const parts = [lazyPart(a.load), lazyPart(b.load)];
      function Page({ drawn }: { drawn: boolean }) {
        usePreloadWhenIdle(parts, drawn);
        return null;
      }
      const { rerender } = render(<Page drawn={false} />);
      await act(async () => vi.runAllTimersAsync());
      expect(a.load).not.toHaveBeenCalled();

      rerender(<Page drawn />);
      await act(async () => vi.runAllTimersAsync());
      expect(a.load).toHaveBeenCalledTimes(1);
      expect(b.load).not.toHaveBeenCalled();

      await act(async () => a.resolve());
      await act(async () => vi.runAllTimersAsync());
      expect(b.load).toHaveBeenCalledTimes(1);
    } finally {
      vi.useRealTimers();
    }
  });
});
