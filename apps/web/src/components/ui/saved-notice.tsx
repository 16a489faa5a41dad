import { Snackbar } from '@mui/material';
import { useEffect, useId, useSyncExternalStore } from 'react';

/**
 * The portal's one sign that a save worked: a short, non-blocking notice at the bottom of the screen (a
 * status, read out by screen readers without taking focus), gone after a few seconds. There is one for
 * the whole page — a newer save's notice replaces the last — so notices never stack.
 */
let current: { message: string; id: number } | null = null;
/** Mounted hosts, innermost last: a modal (the wizard's panel) hides the page behind it, so its own host shows the notice. */
let hosts: string[] = [];
const listeners = new Set<() => void>();

function notify() {
  for (const listener of listeners) listener();
}

function publish(next: typeof current) {
  current = next;
  notify();
}

export function showSaved(message: string) {
  publish({ message, id: (current?.id ?? 0) + 1 });
}

/** Takes the notice down (tests start each screen without one). */
export function hideSaved() {
  publish(null);
}

function subscribe(listener: () => void) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/**
 * Rendered around the signed-in pages (ProtectedLayout), inside a modal panel that saves (the wizard) and
 * around a screen under test. Only the innermost mounted one shows the notice.
 */
export function SavedNoticeHost() {
  const id = useId();
  useEffect(() => {
    hosts = [...hosts, id];
    notify();
    return () => {
      hosts = hosts.filter((h) => h !== id);
      notify();
    };
  }, [id]);
  const notice = useSyncExternalStore(subscribe, () => current);
  const innermost = useSyncExternalStore(subscribe, () => hosts.at(-1));
  if (innermost !== id) return null;
  return (
    <Snackbar
      key={notice?.id}
      open={notice !== null}
      message={notice?.message}
      autoHideDuration={4000}
      onClose={(_e, reason) => reason !== 'clickaway' && publish(null)}
      anchorOrigin={{ vertical: 'bottom', horizontal: 'center' }}
      slotProps={{ content: { role: 'status' } }}
    />
  );
}
