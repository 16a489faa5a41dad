import type { ApplicationUser } from '@latchkey/contract';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { storeSignIn } from '../../lib/session';
import { json, makeJwt, noContent, nowSeconds, renderRoute, stubFetch, type Call } from '../../test/helpers';
import { SettingsPage } from './settings-page';

// Midday UTC, so the local date is the same in any time zone the tests run in.
const ADDED = Date.UTC(2024, 2, 5, 12) / 1000;

const user = (n: number, over: Partial<ApplicationUser> = {}): ApplicationUser => ({
  userId: `00000000-0000-4000-8000-00000000000${n}`,
  sub: `sub-${n}`,
  email: `user${n}@acme.test`,
  displayName: `User ${n}`,
  status: 'active',
  createdAt: ADDED,
  updatedAt: ADDED,
  lastSeenAt: ADDED,
  ...over,
});

const USERS = '/api/platform/application/app-1/user';
const query = (call: Call) => new URL(call.url, 'http://x').searchParams;
const lists = (calls: Call[]) => calls.filter((c) => c.method === 'GET' && c.url.startsWith(USERS));

function setup(answer: (call: Call) => Response | undefined) {
  storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600 }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
  const calls = stubFetch((call) => answer(call) ?? json({ code: 404, message: 'Not found' }, 404));
  renderRoute(<SettingsPage />, { path: '/:appId/settings', initial: '/app-1/settings' });
  return { calls, u: userEvent.setup() };
}

const table = () => screen.getByRole('table', { name: 'Partner users' });
const bodyRows = () => within(table()).getAllByRole('row').slice(1);

describe('Settings → Partner users', () => {
  it('lists the users with email, name, dd/mm/yyyy, status, and pages with Load more', async () => {
    const { calls, u } = setup((call) => {
      if (call.method !== 'GET') return undefined;
      return query(call).get('cursor') === 'page-2'
        ? json({ users: [user(3)], nextCursor: null })
        : json({ users: [user(1), user(2, { displayName: null, sub: null, status: 'pending', lastSeenAt: null })], nextCursor: 'page-2' });
    });
    expect(await screen.findByText('user1@acme.test')).toBeInTheDocument();
    expect(within(table()).getAllByRole('columnheader').map((h) => h.textContent)).toEqual(['User Email', 'Display Name', 'Added', 'Status', 'Actions']);
    expect(bodyRows().map((r) => within(r).getAllByRole('cell').slice(0, 4).map((c) => c.textContent))).toEqual([
      ['user1@acme.test', 'User 1', '05/03/2024', 'Active'],
      ['user2@acme.test', 'Not set', '05/03/2024', 'Pending'],
    ]);

    await u.click(screen.getByRole('button', { name: 'Load more' }));
    expect(await screen.findByText('user3@acme.test')).toBeInTheDocument();
    expect(bodyRows()).toHaveLength(3);
    expect(query(lists(calls).at(-1)!).get('cursor')).toBe('page-2');
    expect(screen.queryByRole('button', { name: 'Load more' })).toBeNull();
  });

  it('searches on the server once typing pauses, and says when nothing matches', async () => {
    const { calls, u } = setup((call) => {
      if (call.method !== 'GET') return undefined;
      const search = query(call).get('search');
      if (!search) return json({ users: [user(1), user(2)], nextCursor: null });
      return json({ users: search === 'user2' ? [user(2)] : [], nextCursor: null });
    });
    await screen.findByText('user1@acme.test');
    await u.type(screen.getByRole('searchbox', { name: 'Search partner users' }), 'user2');
    await waitFor(() => expect(screen.queryByText('user1@acme.test')).toBeNull());
    expect(screen.getByText('user2@acme.test')).toBeInTheDocument();
    // Debounced: one request for the whole word, none per keystroke.
    expect(lists(calls).map((c) => query(c).get('search'))).toEqual([null, 'user2']);

    await u.clear(screen.getByRole('searchbox', { name: 'Search partner users' }));
    await u.type(screen.getByRole('searchbox', { name: 'Search partner users' }), 'nobody');
    expect(await screen.findByText('No partner users match “nobody”')).toBeInTheDocument();
  });

  it('shows the empty state, and a load failure with Try again', async () => {
    let fail = true;
    setup((call) => {
      if (call.method !== 'GET') return undefined;
      return fail ? json({ code: 500, message: 'Something broke' }, 500) : json({ users: [], nextCursor: null });
    });
    expect(await screen.findByText('The partner users could not be loaded: Something broke')).toBeInTheDocument();
    expect(screen.queryByRole('table')).toBeNull();
    fail = false;
    await userEvent.setup().click(screen.getByRole('button', { name: 'Try again' }));
    expect(await screen.findByText('No partner users yet')).toBeInTheDocument();
    expect(screen.queryByText(/could not be loaded/)).toBeNull();
  });

  it('adds a user by email: contract validation, the server’s 409 in the dialog, then success', async () => {
    let listed: ApplicationUser[] = [];
    const { calls, u } = setup((call) => {
      if (call.method === 'GET') return json({ users: listed, nextCursor: null });
      if (call.method !== 'POST') return undefined;
      const email = (call.body as { email: string }).email;
      if (email === 'taken@acme.test') return json({ code: 409, message: 'This user has already been added to the application' }, 409);
      listed = [user(4, { email, displayName: null, sub: null, status: 'pending' })];
      return json(listed[0], 201);
    });
    await screen.findByText('No partner users yet');
    await u.click(screen.getByRole('button', { name: 'Add user' }));
    const dialog = await screen.findByRole('dialog', { name: 'Add user' });
    const email = within(dialog).getByRole('textbox', { name: /User email/ });
    await u.type(email, 'not-an-email');
    expect(await within(dialog).findByText('Invalid email address')).toBeInTheDocument();
    expect(within(dialog).getByRole('button', { name: 'Add' })).toBeDisabled();

    await u.clear(email);
    await u.type(email, 'taken@acme.test');
    await waitFor(() => expect(within(dialog).getByRole('button', { name: 'Add' })).toBeEnabled());
    await u.click(within(dialog).getByRole('button', { name: 'Add' }));
    // The refusal stays in the dialog, under the field, which keeps the email and takes focus.
    expect(await within(dialog).findByText('This user has already been added to the application')).toBeInTheDocument();
    expect(email).toHaveValue('taken@acme.test');
    expect(email).toHaveFocus();
    expect(email).toHaveAttribute('aria-invalid', 'true');

    await u.clear(email);
    await u.type(email, 'new@acme.test');
    expect(within(dialog).queryByText('This user has already been added to the application')).toBeNull();
    await u.click(within(dialog).getByRole('button', { name: 'Add' }));
    // A non-blocking notice, not a dialog to dismiss.
    expect(await screen.findByRole('status')).toHaveTextContent('new@acme.test has been added. They stay pending until they first sign in.');
    expect(calls.filter((c) => c.method === 'POST').map((c) => c.body)).toEqual([{ email: 'taken@acme.test' }, { email: 'new@acme.test' }]);
    const row = (await screen.findByText('new@acme.test')).closest('tr')!;
    expect(row).toHaveTextContent('Pending');
  });

  it('removes a user from the row menu after confirmation, and shows the server’s message on failure', async () => {
    let listed = [user(1), user(2)];
    const { calls, u } = setup((call) => {
      if (call.method === 'GET') return json({ users: listed, nextCursor: null });
      if (call.method !== 'DELETE') return undefined;
      const { userId } = call.body as { userId: string };
      if (userId === user(2).userId) return json({ code: 404, message: 'This user is not a user of the application' }, 404);
      listed = listed.filter((x) => x.userId !== userId);
      return noContent();
    });
    await screen.findByText('user1@acme.test');

    await u.click(screen.getByRole('button', { name: 'Actions for user1@acme.test' }));
    await u.click(await screen.findByRole('menuitem', { name: 'Remove user' }));
    const confirm = await screen.findByRole('dialog', { name: 'Are you sure you want to remove this user from the application?' });
    expect(confirm).toHaveTextContent('user1@acme.test');
    await u.click(within(confirm).getByRole('button', { name: 'Remove' }));
    await waitFor(() => expect(screen.queryByText('user1@acme.test')).toBeNull());
    expect(calls.filter((c) => c.method === 'DELETE').map((c) => c.body)).toEqual([{ userId: user(1).userId }]);
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());

    await u.click(screen.getByRole('button', { name: 'Actions for user2@acme.test' }));
    await u.click(await screen.findByRole('menuitem', { name: 'Remove user' }));
    await u.click(within(await screen.findByRole('dialog', { name: /remove this user/ })).getByRole('button', { name: 'Remove' }));
    expect(await screen.findByRole('alertdialog', { name: 'Failed' })).toHaveTextContent('This user is not a user of the application');
    expect(screen.getByText('user2@acme.test')).toBeInTheDocument();
  });
});
