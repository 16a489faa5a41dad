import type { AccessCode } from '@latchkey/contract';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { setLanguage } from '../../../app/i18n';
import { storeSignIn } from '../../../lib/session';
import { json, makeJwt, noContent, nowSeconds, renderRoute, stubFetch, type Call } from '../../../test/helpers';
import { LOCKS } from '../test-fixtures';
import { AccessCodesCard } from './access-codes-card';

const CODES = `${LOCKS}/lock-1/access-code`;
const HOUR = 3600;
const hour = Math.floor(Date.now() / 1000 / HOUR) * HOUR;

const sampleCode = (over: Partial<AccessCode> = {}): AccessCode => ({
  accessCodeId: 'code-1',
  lockId: 'lock-1',
  name: 'Cleaner',
  code: '482913',
  kind: 'online',
  start: null,
  end: null,
  status: 'set',
  createdAt: 1_700_000_000,
  ...over,
});

function setup(codes: AccessCode[], answer: (call: Call) => Response | undefined = () => undefined) {
  storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600 }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
  const list = [...codes];
  const calls = stubFetch((call) => {
    const own = answer(call);
    if (own) return own;
    if (call.url === CODES && call.method === 'GET') return json(list);
    return json({ code: 404, message: 'Not found' }, 404);
  });
  renderRoute(<AccessCodesCard appId="app-1" lockId="lock-1" />);
  return { calls, list, u: userEvent.setup() };
}

const card = () => screen.findByRole('region', { name: 'Access codes' });
const posts = (calls: Call[]) => calls.filter((c) => c.method === 'POST').map((c) => c.body);

describe('Access codes card', () => {
  it('lists each code with its kind, window and status in words, the code to copy, and says what offline codes do', async () => {
    setup([
      sampleCode(),
      sampleCode({ accessCodeId: 'code-2', name: 'Plumber', code: '5521', status: 'setting', start: hour }),
      sampleCode({ accessCodeId: 'code-3', name: 'Guest', code: '0123456789', kind: 'offline', status: 'withdrawn', start: hour, end: hour + 2 * HOUR }),
    ]);
    const region = await card();
    expect(region).toHaveTextContent('An offline code works without the door being online: the platform computes it, the door checks it itself');
    expect(region).toHaveTextContent('A withdrawn code keeps working at a door that is offline until the door is reached again.');
    const items = await within(region).findAllByRole('listitem');
    expect(items).toHaveLength(3);
    expect(items[0]).toHaveTextContent('Cleaner');
    expect(items[0]).toHaveTextContent('Online');
    expect(items[0]).toHaveTextContent('Set');
    expect(items[0]).toHaveTextContent('Any time, no end');
    expect(items[1]).toHaveTextContent('Setting…');
    expect(items[1]).toHaveTextContent(/From .+, no end/);
    expect(items[2]).toHaveTextContent('Offline');
    expect(items[2]).toHaveTextContent('Withdrawn');
    expect(items[2]).toHaveTextContent(/.+ to .+/);
    expect(items[2]).toHaveTextContent('Withdrawn: a door that is offline keeps accepting it within its window until the door is reached again.');
    // A withdrawn code has nothing left to withdraw.
    expect(within(items[2]!).queryByRole('button', { name: /Withdraw/ })).toBeNull();

    await userEvent.setup().click(within(items[0]!).getByRole('button', { name: 'Copy code of Cleaner' }));
    expect(await navigator.clipboard.readText()).toBe('482913');
  });

  it('creates an online code with 6 digits made up when none is typed, then shows it large to copy', async () => {
    const { calls, list, u } = setup([], (call) => {
      if (call.method !== 'POST') return undefined;
      const made = sampleCode({ accessCodeId: 'new', name: 'Cleaner', code: '739104', status: 'setting' });
      list.push(made);
      return json(made, 201);
    });
    const region = await card();
    expect(await within(region).findByText('No access codes yet.')).toBeInTheDocument();
    await u.click(within(region).getByRole('button', { name: 'Create code' }));
    const dialog = await screen.findByRole('dialog', { name: 'Create access code' });
    expect(within(dialog).getByRole('radio', { name: 'Online' })).toBeChecked();
    expect(within(dialog).getByLabelText('Code (optional)')).toHaveAccessibleDescription('4 to 8 digits; leave empty to generate 6 digits');
    await u.type(within(dialog).getByRole('textbox', { name: /Name/ }), 'Cleaner');
    await u.click(within(dialog).getByRole('button', { name: 'Create code' }));

    const created = await screen.findByRole('dialog', { name: 'Code created' });
    expect(posts(calls)).toEqual([{ name: 'Cleaner', kind: 'online' }]);
    expect(within(created).getByRole('group', { name: 'code of Cleaner' })).toHaveTextContent('739104');
    await u.click(within(created).getByRole('button', { name: 'Copy code of Cleaner' }));
    expect(await navigator.clipboard.readText()).toBe('739104');
    await u.click(within(created).getByRole('button', { name: 'Done' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(await within(region).findByText('Setting…')).toBeInTheDocument();
  });

  it('checks the fields with the contract’s messages before sending anything', async () => {
    const { calls, u } = setup([]);
    await u.click(await within(await card()).findByRole('button', { name: 'Create code' }));
    const dialog = await screen.findByRole('dialog', { name: 'Create access code' });
    await u.type(within(dialog).getByLabelText('Code (optional)'), '12a4');
    await u.click(within(dialog).getByRole('button', { name: 'Create code' }));
    expect(await within(dialog).findByText('An access code may hold digits (0–9) only')).toBeInTheDocument();
    expect(within(dialog).getByText('Required')).toBeInTheDocument();
    await u.clear(within(dialog).getByLabelText('Code (optional)'));
    await u.type(within(dialog).getByLabelText('Code (optional)'), '123');
    expect(await within(dialog).findByText('An access code has 4 to 8 digits')).toBeInTheDocument();
    expect(posts(calls)).toEqual([]);
  });

  it('a code that clashes shows the server’s message under the code, keeping what was typed', async () => {
    const { u } = setup([], (call) =>
      call.method === 'POST'
        ? json({ code: 409, message: 'This lock already has a current code with these digits: choose other digits' }, 409)
        : undefined,
    );
    await u.click(await within(await card()).findByRole('button', { name: 'Create code' }));
    const dialog = await screen.findByRole('dialog', { name: 'Create access code' });
    await u.type(within(dialog).getByRole('textbox', { name: /Name/ }), 'Cleaner');
    const code = within(dialog).getByLabelText('Code (optional)');
    await u.type(code, '1234');
    await u.click(within(dialog).getByRole('button', { name: 'Create code' }));
    expect(await within(dialog).findByText('This lock already has a current code with these digits: choose other digits')).toBeInTheDocument();
    expect(code).toHaveValue('1234');
    expect(code).toHaveFocus();
    expect(within(dialog).getByRole('textbox', { name: /Name/ })).toHaveValue('Cleaner');
    expect(screen.queryByRole('alertdialog')).toBeNull();
  });

  it('a refusal naming no field shows in the dialog, which keeps the form', async () => {
    const { u } = setup([], (call) =>
      call.method === 'POST' ? json({ code: 400, message: 'A lock can have at most 200 access codes' }, 400) : undefined,
    );
    await u.click(await within(await card()).findByRole('button', { name: 'Create code' }));
    const dialog = await screen.findByRole('dialog', { name: 'Create access code' });
    await u.type(within(dialog).getByRole('textbox', { name: /Name/ }), 'Cleaner');
    await u.click(within(dialog).getByRole('button', { name: 'Create code' }));
    expect(await within(dialog).findByRole('alert')).toHaveTextContent('A lock can have at most 200 access codes');
    expect(within(dialog).getByRole('textbox', { name: /Name/ })).toHaveValue('Cleaner');
  });

  it('an offline code is sent with a window on whole hours and no code; the window is required', async () => {
    const { calls, u } = setup([], (call) =>
      call.method === 'POST'
        ? json(sampleCode({ kind: 'offline', code: '0031415926', start: hour + HOUR, end: hour + 25 * HOUR }), 201)
        : undefined,
    );
    await u.click(await within(await card()).findByRole('button', { name: 'Create code' }));
    const dialog = await screen.findByRole('dialog', { name: 'Create access code' });
    await u.type(within(dialog).getByRole('textbox', { name: /Name/ }), 'Guest');
    await u.type(within(dialog).getByLabelText('Code (optional)'), '1234');
    await u.click(within(dialog).getByRole('radio', { name: 'Offline' }));
    // No digits to choose: the platform computes an offline code.
    expect(within(dialog).queryByLabelText('Code (optional)')).toBeNull();
    expect(within(dialog).getByText('When it works: start and end on a whole hour, 1 hour to 30 days apart')).toBeInTheDocument();
    // Offered: from the next whole hour, for a day.
    await u.click(within(dialog).getByRole('combobox', { name: 'Start hour' }));
    const options = await screen.findAllByRole('option');
    expect(options.every((o) => /^\d\d:\d\d$/.test(o.textContent ?? ''))).toBe(true);
    await u.keyboard('{Escape}');
    await u.click(within(dialog).getByRole('button', { name: 'Create code' }));
    await waitFor(() => expect(posts(calls)).toHaveLength(1));
    const body = posts(calls)[0] as { start: number; end: number };
    expect(body).toEqual({ name: 'Guest', kind: 'offline', start: expect.any(Number), end: expect.any(Number) });
    expect(body.start % HOUR).toBe(0);
    expect(body.end - body.start).toBe(24 * HOUR);
    expect(body.start).toBeGreaterThan(Date.now() / 1000);
    expect(await screen.findByRole('dialog', { name: 'Code created' })).toHaveTextContent('0031415926');
  });

  it('an offline code without its start is refused in the form with the contract’s message', async () => {
    const { calls, u } = setup([]);
    await u.click(await within(await card()).findByRole('button', { name: 'Create code' }));
    const dialog = await screen.findByRole('dialog', { name: 'Create access code' });
    await u.type(within(dialog).getByRole('textbox', { name: /Name/ }), 'Guest');
    await u.click(within(dialog).getByRole('radio', { name: 'Offline' }));
    await u.clear(within(dialog).getByLabelText('Start day'));
    await u.click(within(dialog).getByRole('button', { name: 'Create code' }));
    expect(await within(dialog).findByText('An offline code needs a start and an end')).toBeInTheDocument();
    expect(posts(calls)).toEqual([]);
  });

  it('withdraws a code only after confirming, and says so', async () => {
    const { calls, list, u } = setup([sampleCode()], (call) => {
      if (call.method !== 'DELETE') return undefined;
      list.splice(0);
      return noContent();
    });
    const region = await card();
    await u.click(await within(region).findByRole('button', { name: 'Withdraw the code of Cleaner' }));
    let confirm = await screen.findByRole('dialog', { name: 'Withdraw the code of Cleaner?' });
    expect(confirm).toHaveTextContent('A door that is offline now keeps accepting it until it is reached again.');
    await u.click(within(confirm).getByRole('button', { name: 'Cancel' }));
    expect(calls.filter((c) => c.method === 'DELETE')).toHaveLength(0);
    await u.click(await within(region).findByRole('button', { name: 'Withdraw the code of Cleaner' }));
    confirm = await screen.findByRole('dialog', { name: 'Withdraw the code of Cleaner?' });
    await u.click(within(confirm).getByRole('button', { name: 'Withdraw' }));
    await waitFor(() => expect(calls.filter((c) => c.method === 'DELETE').map((c) => c.url)).toEqual([`${CODES}/code-1`]));
    expect(await screen.findByText('The code of Cleaner has been withdrawn.')).toBeInTheDocument();
    expect(await within(region).findByText('No access codes yet.')).toBeInTheDocument();
  });

  it('in German: the window and status in German words', async () => {
    await setLanguage('de');
    setup([sampleCode({ start: hour })]);
    const region = await screen.findByRole('region', { name: 'Zugangscodes' });
    const item = await within(region).findByRole('listitem');
    expect(item).toHaveTextContent(/Ab \d\d\.\d\d\.\d{4}, \d\d:\d\d, ohne Ende/);
    expect(item).toHaveTextContent('Gesetzt');
  });
});
