import type { FieldChange, HistoryEntry } from '@latchkey/contract';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { storeSignIn } from '../../lib/session';
import { json, makeJwt, nowSeconds, renderRoute, stubFetch, type Call } from '../../test/helpers';
import { HistoryPage } from './history-page';

// Midday UTC, so the local date is the same in any time zone the tests run in.
const AT = Date.UTC(2024, 2, 5, 12) / 1000;
const HISTORY = '/api/platform/application/app-1/history';

const entry = (n: number, over: Partial<HistoryEntry> = {}): HistoryEntry => ({
  id: `e-${n}`,
  at: AT,
  actor: { userId: 'user-1', email: 'owner@acme.test' },
  kind: 'details',
  subject: null,
  changes: [{ field: 'name', before: 'Old name', after: `Name ${n}` }],
  ...over,
});

const query = (call: Call) => new URL(call.url, 'http://x').searchParams;
const lists = (calls: Call[]) => calls.filter((c) => c.url.startsWith(HISTORY) && !c.url.startsWith(`${HISTORY}/actors`));

const OWNERS = [
  { userId: 'user-1', email: 'owner@acme.test' },
  { userId: 'user-2', email: 'other@acme.test' },
];

function setup(answer: (call: Call) => Response | undefined, actors: unknown[] = OWNERS, initial = '/app-1/history') {
  storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600 }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
  const calls = stubFetch((call) => {
    if (call.url.endsWith('/history/actors')) return json(actors);
    return answer(call) ?? json({ code: 404, message: 'Not found' }, 404);
  });
  const utils = renderRoute(<HistoryPage />, { path: '/:appId/history', initial });
  return { calls, u: userEvent.setup(), ...utils };
}

describe('History', () => {
  it('shows each change with kind, actor, a dd/mm/yyyy time and a before/after table; pages with Load more', async () => {
    const { calls, u } = setup((call) =>
      query(call).get('cursor') === 'next'
        ? json({ items: [entry(3)], nextCursor: null })
        : json({
            items: [
              entry(1, { kind: 'branding', changes: [{ field: 'emailPreferences.primaryColour', before: '#00283C', after: '#112233' }] }),
              entry(2, { kind: 'key', subject: 'kid-1', changes: [{ field: 'authKeys', before: null, after: { kid: 'kid-1', kty: 'OKP' } }] }),
            ],
            nextCursor: 'next',
          }),
    );
    const list = await screen.findByRole('list', { name: 'Changes' });
    const items = within(list).getAllByRole('listitem');
    expect(items).toHaveLength(2);
    expect(within(items[0]!).getByText('Email branding')).toBeInTheDocument();
    expect(within(items[0]!).getByText('by owner@acme.test')).toBeInTheDocument();
    expect(within(items[0]!).getByText(/^05\/03\/2024/)).toBeInTheDocument();
    const rows = within(within(items[0]!).getByRole('table')).getAllByRole('row').slice(1);
    expect(rows.map((r) => Array.from(r.children).map((c) => c.textContent))).toEqual([['Primary colour', '#00283C', '#112233']]);
    const keyRows = within(within(items[1]!).getByRole('table')).getAllByRole('row').slice(1);
    expect(Array.from(keyRows[0]!.children).map((c) => c.textContent)).toEqual(['Auth key', '—', 'kid: kid-1\nkty: OKP']);

    await u.click(screen.getByRole('button', { name: 'Load more' }));
    await waitFor(() => expect(within(list).getAllByRole('listitem')).toHaveLength(3));
    // The keyboard goes on where the list grew (the button, now gone, would have dropped focus to the page).
    await waitFor(() => expect(within(list).getAllByRole('listitem')[2]).toHaveFocus());
    expect(query(lists(calls).at(-1)!).get('cursor')).toBe('next');
    expect(screen.queryByRole('button', { name: 'Load more' })).toBeNull();
  });

  it('reads each value as a person would: dates for a share’s bounds and a key’s expiry, the role, lists, secrets', async () => {
    const share: FieldChange[] = [
      { field: 'role', before: null, after: 'USER' },
      { field: 'start', before: null, after: AT },
      { field: 'end', before: AT, after: null },
    ];
    const rule = { start: '08:00', end: '18:00', timezone: 'Europe/Berlin', days: ['MONDAY', 'TUESDAY'] };
    share.push({ field: 'timeWindow', before: null, after: rule });
    const settings = [{ field: 'settings.usageRequirements', before: {}, after: { time: [rule], location: null } }];
    const webhook = [
      { field: 'events', before: null, after: ['share.added', 'application.updated'] },
      { field: 'secret', before: '[redacted]', after: '[redacted]' },
    ];
    setup(() =>
      json({
        items: [
          entry(1, { kind: 'share', subject: 'guest@acme.test · Front door', changes: share }),
          entry(2, { kind: 'key', subject: 'kid-1', changes: [{ field: 'authKeys', before: null, after: { kid: 'kid-1', kty: 'EC', exp: AT } }] }),
          entry(3, { kind: 'webhook', subject: 'https://hooks.test', changes: webhook }),
          entry(4, { kind: 'lock_settings', subject: 'Front door', changes: settings }),
          entry(5, { kind: 'issuer', changes: [{ field: 'authDomainDiscovery', before: null, after: { jwksUri: 'https://id.acme.test/jwks' } }] }),
        ],
        nextCursor: null,
      }),
    );
    const list = await screen.findByRole('list', { name: 'Changes' });
    const cells = (n: number) =>
      within(within(list).getAllByRole('listitem')[n]!).getAllByRole('row').slice(1).map((r) => Array.from(r.children).map((c) => c.textContent));
    const when = /^05\/03\/2024, \d\d:\d\d$/;
    const [role, start, end, window] = cells(0);
    expect(window).toEqual(['Time window', '—', 'Mon, Tue, 08:00–18:00 (Europe/Berlin)']);
    expect(cells(3)).toEqual([['Usage requirements', '—', 'Days and hours: Mon, Tue, 08:00–18:00 (Europe/Berlin)\nLocation: —']]);
    expect(cells(4)).toEqual([['OpenID discovery (key set)', '—', 'Key set (jwks_uri): https://id.acme.test/jwks']]);
    // Nothing before is not struck out as if something had been removed.
    expect(within(list).getAllByRole('listitem')[3]!.querySelector('del')).toBeNull();
    expect(role).toEqual(['Role', '—', 'User']);
    expect(start![2]).toMatch(when);
    expect(end![1]).toMatch(when);
    const [kid, kty, exp] = cells(1)[0]![2]!.split('\n');
    expect([kid, kty]).toEqual(['kid: kid-1', 'kty: EC']);
    expect(exp).toMatch(/^Expires: 05\/03\/2024, \d\d:\d\d$/);
    expect(cells(2)).toEqual([
      ['Events', '—', 'Share added, Application changed'],
      ['Signing secret', '[redacted]', '[redacted]'],
    ]);
  });

  it('shows a tile’s and a site’s changes with their kind, and filters on them', async () => {
    const { calls, u } = setup((call) => {
      if (query(call).get('kind') === 'site') return json({ items: [entry(3, { kind: 'site', subject: 'Main door', changes: [{ field: 'site', before: null, after: 'East wing' }] })], nextCursor: null });
      return json({
        items: [
          entry(1, { kind: 'tile', subject: 'tile-1', changes: [{ field: 'locks', before: ['Main door'], after: ['Main door', 'Garage'] }] }),
          entry(2, { kind: 'site', subject: 'North wing', changes: [{ field: 'name', before: 'North wing', after: 'East wing' }] }),
        ],
        nextCursor: null,
      });
    });
    const list = await screen.findByRole('list', { name: 'Changes' });
    const items = within(list).getAllByRole('listitem');
    expect(within(items[0]!).getByText('Tile')).toBeInTheDocument();
    expect(within(items[1]!).getByText('Site')).toBeInTheDocument();
    const rows = within(within(items[0]!).getByRole('table')).getAllByRole('row').slice(1);
    expect(rows.map((r) => Array.from(r.children).map((c) => c.textContent))).toEqual([['Locks', 'Main door', 'Main door, Garage']]);
    await u.selectOptions(screen.getByRole('combobox', { name: 'Kind of change' }), 'Site');
    expect(await screen.findByText('East wing')).toBeInTheDocument();
    expect(query(lists(calls).at(-1)!).get('kind')).toBe('site');
    expect(within(screen.getByRole('combobox', { name: 'Kind of change' })).getByRole('option', { name: 'Tile' })).toBeInTheDocument();
  });

  it('filters by kind and by actor on the server, keeping the filters in the URL', async () => {
    const { calls, u, router } = setup((call) => {
      const kind = query(call).get('kind');
      const actor = query(call).get('actor');
      if (kind === 'cors') return json({ items: [entry(5, { kind: 'cors', changes: [{ field: 'corsDomains', before: null, after: 'https://a.test' }] })], nextCursor: null });
      if (actor) return json({ items: [], nextCursor: null });
      return json({ items: [entry(1)], nextCursor: null });
    });
    await screen.findByText('Name 1');
    await u.selectOptions(screen.getByRole('combobox', { name: 'Kind of change' }), 'CORS domain');
    expect(await screen.findByText('https://a.test')).toBeInTheDocument();
    expect(router.state.location.search).toBe('?kind=cors');
    await u.selectOptions(screen.getByRole('combobox', { name: 'Kind of change' }), 'All changes');
    await u.selectOptions(screen.getByRole('combobox', { name: 'Changed by' }), 'other@acme.test');
    expect(await screen.findByText('No changes match.')).toBeInTheDocument();
    const asked = lists(calls).map((c) => [query(c).get('kind'), query(c).get('actor')]);
    expect(asked.slice(0, 2)).toEqual([
      [null, null],
      ['cors', null],
    ]);
    expect(asked.at(-1)).toEqual([null, 'user-2']);
    expect(router.state.location.search).toBe('?actor=user-2');
  });

  it('shows a load failure with Try again', async () => {
    let fail = true;
    const { u } = setup(() => (fail ? json({ code: 500, message: 'Boom' }, 500) : json({ items: [entry(1)], nextCursor: null })));
    expect(await screen.findByText(/The history could not be loaded/)).toBeInTheDocument();
    fail = false;
    await u.click(screen.getByRole('button', { name: 'Try again' }));
    expect(await screen.findByText('Name 1')).toBeInTheDocument();
  });

  it('offers everyone in the history as actor, a former owner and an actor known by email only too', async () => {
    const { calls, u, router } = setup(
      () => json({ items: [entry(1)], nextCursor: null }),
      [
        { userId: 'user-9', email: 'former@acme.test' },
        { userId: null, email: 'admin@lock.test' },
      ],
    );
    const select = await screen.findByRole('combobox', { name: 'Changed by' });
    await waitFor(() => expect(within(select).getAllByRole('option').map((o) => o.textContent)).toEqual(['Anyone', 'former@acme.test', 'admin@lock.test']));
    await u.selectOptions(select, 'former@acme.test');
    await waitFor(() => expect(query(lists(calls).at(-1)!).get('actor')).toBe('user-9'));
    expect(router.state.location.search).toBe('?actor=user-9');
    await u.selectOptions(select, 'admin@lock.test');
    await waitFor(() => expect(query(lists(calls).at(-1)!).get('actor')).toBe('admin@lock.test'));
    expect(calls.some((c) => c.url.endsWith('/owner'))).toBe(false);
  });
});
