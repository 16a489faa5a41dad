import { useEffect, useState } from 'react';

/** True once `active` has stayed true for `delayMs`: fast calls never flash a loading dialog. */
export function useDelayedFlag(active: boolean, delayMs: number): boolean {
  const [shown, setShown] = useState(false);
  useEffect(() => {
    if (!active) {
      setShown(false);
      return;
    }
    const id = setTimeout(() => setShown(true), delayMs);
    return () => clearTimeout(id);
  }, [active, delayMs]);
  return active && shown;
}
