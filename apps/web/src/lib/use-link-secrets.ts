import { useEffect, useState } from 'react';
import { useLocation, useNavigate, type Location } from 'react-router';

type LinkValues<K extends string> = Record<K, string>;

/**
 * The values an emailed link brings this page (a reset token, an invitation code, a sign-in secret). The
 * platform puts them in the URL's fragment (`#code=…`), which a browser never sends to a server, so no
 * server or proxy log sees them; a link mailed before they moved there has them in the query, and still
 * works. Once read they leave the address bar (history, bookmarks, a screenshot, a Referer): the rest of the
 * URL and the router state stay. A later link opened in the same tab replaces them. A name absent: ''.
 */
export function useLinkSecrets<K extends string>(names: readonly K[]): LinkValues<K> {
  const location = useLocation();
  const navigate = useNavigate();
  const [values, setValues] = useState(() => read(location, names));

  useEffect(() => {
    const found = read(location, names);
    if (!names.some((name) => found[name])) return;
    setValues((previous) => (names.every((name) => previous[name] === found[name]) ? previous : found));
    const search = without(new URLSearchParams(location.search), names);
    const hash = without(new URLSearchParams(location.hash.slice(1)), names);
    void navigate({ pathname: location.pathname, search: search ? `?${search}` : '', hash: hash ? `#${hash}` : '' }, { replace: true, state: location.state as unknown });
  }, [location, names, navigate]);

  return values;
}

function read<K extends string>(location: Pick<Location, 'search' | 'hash'>, names: readonly K[]): LinkValues<K> {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const query = new URLSearchParams(location.search);
  return Object.fromEntries(names.map((name) => [name, fragment.get(name) ?? query.get(name) ?? ''])) as LinkValues<K>;
}

function without(params: URLSearchParams, names: readonly string[]): string {
  for (const name of names) params.delete(name);
  return params.toString();
}
