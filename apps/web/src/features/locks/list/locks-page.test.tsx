import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { storeSignIn } from '../../../lib/session';
import { json, makeJwt, noContent, nowSeconds, renderRoute, stubFetch } from '../../../test/helpers';
import { eventStream, LOCKS, sampleLock } from '../test-fixtures';
import { LocksPage } from './locks-page';

function setup(refuse?: (call: { method: string; url: string }) => Response | undefined) {
  storeSignIn({
    authToken: makeJwt({ exp: nowSeconds() + 600 }),
    refreshToken: 'r',
    privateKey: 'a',
    publicKey: 'b',
  });
  const stream = eventStream();
  let locks = [sampleLock()];
  const calls = stubFetch((call) => {
    const refused = refuse?.(call);
    if (refused) return refused;
    if (call.url === `${LOCKS}/events`) return stream.response;
    if (call.url === LOCKS && call.method === 'GET') return json(locks);
    if (call.url === LOCKS && call.method === 'POST') {
      const created = sampleLock({ id: 'lock-2', name: (call.body as { name: string }).name });
      locks = [...locks, created];
      return json(created, 201, { Location: `${LOCKS}/lock-2` });
    }
    if (call.url === `${LOCKS}/lock-1` && call.method === 'PUT')
      return json(sampleLock({ name: (call.body as { name: string }).name }));
    if (call.url === `${LOCKS}/lock-1` && call.method === 'DELETE') return noContent();
    return json({ code: 404, message: 'Not found' }, 404);
  });
  renderRoute(<LocksPage />, { path: '/:appId/locks', initial: '/app-1/locks' });
  return { calls, stream, u: userEvent.setup() };
}

const table = () => screen.getByRole('table', { name: 'Locks' });
/** The non-blocking notice a save gives (the live badge is a status too). */
const notice = (text: string) =>
  waitFor(() => expect(screen.getAllByRole('status').map((s) => s.textContent)).toContain(text));

describe('Locks page', () => {
  it('lists the locks with their state, and counts down an unlock pushed live', async () => {
    const { stream } = setup();
    const link = await screen.findByRole('link', { name: 'Open Front Door' });
    expect(link).toHaveAttribute('href', '/app-1/locks/lock-1');
    expect(within(table()).getByText('Locked')).toBeInTheDocument();
    await screen.findByText('Live');
    stream.push(
      'lock',
      sampleLock({ state: { locked: false, connected: true, unlockedUntil: Date.now() + 1500 } }),
    );
    expect(await within(table()).findByText(/^Unlocked · locks in [12] s$/)).toBeInTheDocument();
    // The lock relocks by time alone: the chip goes back to Locked without another event.
    expect(await within(table()).findByText('Locked', {}, { timeout: 3000 })).toBeInTheDocument();
  });

  it('adds, renames and removes a lock (removal after confirming)', async () => {
    const { calls, u } = setup();
    await screen.findByRole('link', { name: 'Open Front Door' });

    await u.click(screen.getByRole('button', { name: 'Add lock' }));
    let dialog = await screen.findByRole('dialog', { name: 'Add lock' });
    await u.type(within(dialog).getByRole('textbox', { name: /Lock name/ }), '   ');
    expect(within(dialog).getByRole('button', { name: 'Add' })).toBeDisabled();
    await u.type(within(dialog).getByRole('textbox', { name: /Lock name/ }), 'Garage');
    await u.click(within(dialog).getByRole('button', { name: 'Add' }));
    // Every save says so with the one non-blocking notice, not a dialog to dismiss.
    await notice('Garage has been added.');
    expect(await screen.findByRole('link', { name: 'Open Garage' })).toBeInTheDocument();
    expect(screen.queryByRole('dialog')).toBeNull();

    await u.click(screen.getByRole('button', { name: 'Actions for Front Door' }));
    await u.click(await screen.findByRole('menuitem', { name: 'Rename' }));
    dialog = await screen.findByRole('dialog', { name: 'Rename lock' });
    const name = within(dialog).getByRole('textbox', { name: /Lock name/ });
    expect(name).toHaveValue('Front Door');
    await u.clear(name);
    await u.type(name, 'Main Entrance');
    await u.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(await screen.findByRole('link', { name: 'Open Main Entrance' })).toBeInTheDocument();
    await notice('Saved');

    await u.click(screen.getByRole('button', { name: 'Actions for Main Entrance' }));
    await u.click(await screen.findByRole('menuitem', { name: 'Remove' }));
    const confirm = await screen.findByRole('dialog', { name: 'Are you sure you want to remove this lock?' });
    expect(confirm).toHaveTextContent('Main Entrance, its shares and its activity will be deleted.');
    await u.click(within(confirm).getByRole('button', { name: 'Remove' }));
    await waitFor(() => expect(screen.queryByRole('link', { name: 'Open Main Entrance' })).toBeNull());
    await notice('Removed');
    expect(calls.filter((c) => c.method !== 'GET').map((c) => [c.method, c.url, c.body])).toEqual([
      ['POST', LOCKS, { name: 'Garage' }],
      ['PUT', `${LOCKS}/lock-1`, { name: 'Main Entrance' }],
      ['DELETE', `${LOCKS}/lock-1`, undefined],
    ]);
  }, 20_000); // many keystrokes: seconds on a busy 2-core host

  it('a name the server refuses stays in the dialog, under the field, kept and focused', async () => {
    const { u } = setup((call) =>
      call.method === 'POST' && call.url === LOCKS
        ? json({ code: 400, message: 'Invalid request', errors: [{ path: 'name', message: 'This name is already taken' }] }, 400)
        : undefined,
    );
    await screen.findByRole('link', { name: 'Open Front Door' });
    await u.click(screen.getByRole('button', { name: 'Add lock' }));
    const dialog = await screen.findByRole('dialog', { name: 'Add lock' });
    const name = within(dialog).getByRole('textbox', { name: /Lock name/ });
    await u.type(name, 'Garage');
    await u.click(within(dialog).getByRole('button', { name: 'Add' }));
    expect(await within(dialog).findByText('This name is already taken')).toBeInTheDocument();
    expect(name).toHaveValue('Garage');
    expect(name).toHaveFocus();
    expect(screen.getByRole('dialog', { name: 'Add lock' })).toBeInTheDocument();
    expect(screen.queryByRole('dialog', { name: 'Failed' })).toBeNull();
  });
  it('a one-letter name or a pasted one enables Add at once, as typing more would', async () => {
    const { calls, u } = setup();
    await screen.findByRole('link', { name: 'Open Front Door' });
    await u.click(screen.getByRole('button', { name: 'Add lock' }));
    let dialog = await screen.findByRole('dialog', { name: 'Add lock' });
    await u.type(within(dialog).getByRole('textbox', { name: /Lock name/ }), 'G');
    await waitFor(() => expect(within(dialog).getByRole('button', { name: 'Add' })).toBeEnabled());
    await u.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    await u.click(await screen.findByRole('button', { name: 'Add lock' }));
    dialog = await screen.findByRole('dialog', { name: 'Add lock' });
    await u.click(within(dialog).getByRole('textbox', { name: /Lock name/ }));
    await u.paste('Back Gate');
    await waitFor(() => expect(within(dialog).getByRole('button', { name: 'Add' })).toBeEnabled());
    await u.click(within(dialog).getByRole('button', { name: 'Add' }));
    expect(await screen.findByRole('link', { name: 'Open Back Gate' })).toBeInTheDocument();
    expect(calls.filter((c) => c.method === 'POST').map((c) => c.body)).toEqual([{ name: 'Back Gate' }]);
  });
});
