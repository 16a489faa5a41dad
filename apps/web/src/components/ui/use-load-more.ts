import { useEffect, useRef } from 'react';

/**
 * "Load more" that keeps the keyboard's place. The button stays enabled while the page loads (a button
 * that turns disabled under focus drops it to the page, and the last page's button goes away altogether);
 * once the new items are in, focus moves to the first of them, so a keyboard or screen reader user goes
 * on reading where the list grew. `list` goes on the element whose children are the items.
 */
export function useLoadMore<T extends HTMLElement>(count: number, fetchNext: () => Promise<unknown>, fetching: boolean) {
  const list = useRef<T>(null);
  const from = useRef<number | null>(null);
  useEffect(() => {
    if (from.current === null || count <= from.current) return;
    const first = list.current?.children[from.current];
    from.current = null;
    if (first instanceof HTMLElement) {
      first.tabIndex = -1;
      first.focus();
    }
  }, [count]);
  const loadMore = () => {
    if (fetching) return;
    from.current = count;
    void fetchNext();
  };
  return { list, loadMore };
}
