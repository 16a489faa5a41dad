import { useState } from 'react';

/**
 * Whether `open` has been true at least once. A dialog drawn from its first opening on (and kept, so it
 * closes with its transition) costs a page that never opens it nothing; one whose code is a chunk of its
 * own (lazyPart) fetches it then.
 */
export function useOpenedOnce(open: boolean): boolean {
  const [opened, setOpened] = useState(open);
  if (open && !opened) setOpened(true);
  return opened || open;
}
