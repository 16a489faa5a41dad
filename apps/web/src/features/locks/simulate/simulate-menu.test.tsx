import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { storeSignIn } from '../../../lib/session';
import { json, makeJwt, noContent, nowSeconds, renderRoute, stubFetch, type Call } from '../../../test/helpers';
import { LOCKS } from '../test-fixtures';
import { SimulateMenu } from './simulate-menu';

const SIMULATE = `${LOCKS}/lock-1/simulate`;

function setup(answer: (call: Call) => Response | undefined = () => undefined) {
  storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600 }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
  const calls = stubFetch((call) => answer(call) ?? (call.method === 'POST' ? noContent() : json({ code: 404, message: 'Not found' }, 404)));
  renderRoute(<SimulateMenu appId="app-1" lockId="lock-1" />);
  return { calls, u: userEvent.setup() };
}

const pick = async (u: ReturnType<typeof userEvent.setup>, item: string) => {
  await u.click(await screen.findByRole('button', { name: 'Simulate' }));
  await u.click(await screen.findByRole('menuitem', { name: item }));
};

describe('Simulate menu', () => {
  it('each door event is posted to the virtual lock and confirmed with a notice', async () => {
    const { calls, u } = setup();
    const events: [string, string, string][] = [
      ['Door opened', 'door_opened', 'The door reported: opened.'],
      ['Door closed', 'door_closed', 'The door reported: closed.'],
      ['Jammed', 'jammed', 'The door reported: jammed.'],
      ['Tampered', 'tampered', 'The door reported: tampered with.'],
      ['Go offline', 'offline', 'The virtual lock is offline.'],
      ['Come online', 'online', 'The virtual lock is online again.'],
    ];
    for (const [item, path, notice] of events) {
      await pick(u, item);
      await waitFor(() => expect(calls.at(-1)?.url).toBe(`${SIMULATE}/${path}`));
      expect(await screen.findByText(notice)).toBeInTheDocument();
    }
    expect(calls.every((c) => c.method === 'POST' && c.body === undefined)).toBe(true);
  });

  it('a battery level is asked for (0–100) and sent as its value', async () => {
    const { calls, u } = setup();
    await pick(u, 'Battery level…');
    const dialog = await screen.findByRole('dialog', { name: 'Battery level' });
    const level = within(dialog).getByRole('spinbutton', { name: 'Battery (%)' });
    await u.clear(level);
    await u.type(level, '101');
    expect(within(dialog).getByText('A whole number from 0 to 100')).toBeInTheDocument();
    await u.click(within(dialog).getByRole('button', { name: 'Report' }));
    expect(calls).toHaveLength(0);
    await u.clear(level);
    await u.type(level, '17');
    await u.click(within(dialog).getByRole('button', { name: 'Report' }));
    await waitFor(() => expect(calls.map((c) => [c.url, c.body])).toEqual([[`${SIMULATE}/battery`, { value: 17 }]]));
    expect(await screen.findByText('The door reported its battery at 17 %.')).toBeInTheDocument();
  });

  it('the keypad says what the door decided: accepted, or refused with the reason', async () => {
    const { calls, u } = setup((call) => {
      if (call.url !== `${SIMULATE}/keypad`) return undefined;
      return (call.body as { code: string }).code === '482913'
        ? json({ outcome: 'DONE' })
        : json({ outcome: 'REFUSED', reason: 'Wrong code' });
    });
    await pick(u, 'Type a code at the keypad…');
    const dialog = await screen.findByRole('dialog', { name: 'Keypad' });
    const code = within(dialog).getByRole('textbox', { name: 'Code' });
    await u.click(within(dialog).getByRole('button', { name: 'Enter' }));
    expect(within(dialog).getByText('Required')).toBeInTheDocument();
    await u.type(code, '111111');
    await u.click(within(dialog).getByRole('button', { name: 'Enter' }));
    expect(await within(dialog).findByText('Refused: Wrong code')).toBeInTheDocument();
    await u.clear(code);
    await u.type(code, '482913{Enter}');
    expect(await within(dialog).findByText('Accepted: the door unlocked.')).toBeInTheDocument();
    expect(calls.map((c) => c.body)).toEqual([{ code: '111111' }, { code: '482913' }]);
  });

  it('a lock that refuses simulation (it has a device) says why', async () => {
    const { u } = setup(() =>
      json({ code: 409, message: 'This lock has a device: type the code at the device’s keypad (only a virtual lock takes a simulated keypad)' }, 409),
    );
    await pick(u, 'Door opened');
    expect(await screen.findByRole('alertdialog', { name: 'Failed' })).toHaveTextContent('This lock has a device');
  });
});
