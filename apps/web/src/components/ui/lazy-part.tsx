import { lazy, Suspense, useEffect, useState, type ComponentType } from 'react';

/** A component whose code is a chunk of its own, and `preload` to fetch that code ahead of a drawing. */
export type LazyPart<P extends object> = ComponentType<P> & { preload: () => Promise<unknown> };

/**
 * A part of a page that only a click shows (a dialog, the steps after "Connect a device"), in a chunk of its
 * own: the page has less code to fetch, parse and run before it is drawn. Once its code is in (`preload`,
 * or an earlier drawing) it draws at once, as an imported component does; drawn before that, it shows
 * nothing until its code arrives. `load` resolves to the component: `() => import('./x').then((m) => m.X)`.
 */
export function lazyPart<P extends object>(load: () => Promise<ComponentType<P>>): LazyPart<P> {
  let loaded: ComponentType<P> | undefined;
  let loading: Promise<ComponentType<P>> | undefined;
  const preload = () =>
    (loading ??= load().then(
      (component) => (loaded = component),
      (error: unknown) => {
        // A chunk that did not arrive (the network) is asked for again by the next preload.
        loading = undefined;
        throw error;
      },
    ));
  const Lazy = lazy(async () => ({ default: await preload() }));
  function Part(props: P) {
    // One component type for the instance's life: going from Lazy to the loaded one would mount it anew,
    // and a dialog would lose what was typed in it.
    const [Component] = useState<ComponentType<P>>(() => loaded ?? Lazy);
    return (
      <Suspense fallback={null}>
        <Component {...props} />
      </Suspense>
    );
  }
  return Object.assign(Part, { preload });
}

/** Runs `task` when the browser is idle (soon, where it cannot say); the returned function cancels it. */
function whenIdle(task: () => void): () => void {
  if (typeof window.requestIdleCallback === 'function') {
    const handle = window.requestIdleCallback(task);
    return () => window.cancelIdleCallback(handle);
  }
  const timer = setTimeout(task, 1);
  return () => clearTimeout(timer);
}

/**
 * Fetches the parts' code while the browser is idle, one part per idle period, once `when` holds (what the
 * page shows first is drawn): the code then costs the page's first drawing nothing, and a click opens the
 * part at once. `parts`: a constant list, declared beside the parts.
 */
export function usePreloadWhenIdle(parts: readonly { preload: () => Promise<unknown> }[], when = true) {
  useEffect(() => {
    if (!when) return;
    let stopped = false;
    let cancel = () => {};
    const next = (i: number) => {
      const part = parts[i];
      if (!part || stopped) return;
      cancel = whenIdle(() => {
        // A part that failed to arrive is fetched again when it is drawn.
        void part.preload().then(
          () => next(i + 1),
          () => next(i + 1),
        );
      });
    };
    next(0);
    return () => {
      stopped = true;
      cancel();
    };
  }, [parts, when]);
}
