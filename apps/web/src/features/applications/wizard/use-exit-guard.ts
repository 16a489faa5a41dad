import { useEffect } from 'react';
import { useBlocker } from 'react-router';

/**
 * While `active`: route changes are held for the exit-warning dialog, and closing the tab asks the
 * browser's own question (browsers show their own wording; returnValue carries ours where shown).
 */
export function useExitGuard(active: boolean, beforeUnloadText: string) {
  const blocker = useBlocker(({ currentLocation, nextLocation }) => active && currentLocation.pathname !== nextLocation.pathname);

  useEffect(() => {
    if (!active) return;
    const onBeforeUnload = (e: BeforeUnloadEvent) => {
      e.preventDefault();
      e.returnValue = beforeUnloadText;
      return beforeUnloadText;
    };
    window.addEventListener('beforeunload', onBeforeUnload);
    return () => window.removeEventListener('beforeunload', onBeforeUnload);
  }, [active, beforeUnloadText]);

  return blocker;
}
