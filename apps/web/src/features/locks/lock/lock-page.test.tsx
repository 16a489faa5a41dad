import { createPublicKey, verify } from 'node:crypto';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Profiler, type ReactElement } from 'react';
import { describe, expect, it, vi } from 'vitest';
import { storeSignIn } from '../../../lib/session';
import { setLanguage } from '../../../app/i18n';
import {
  json,
  makeJwt,
  noContent,
  nowSeconds,
  renderRoute,
  stubFetch,
  type Call,
} from '../../../test/helpers';
import { eventStream, LOCKS, sampleEntry, sampleLock, sampleShare } from '../test-fixtures';
import { LockPage } from './lock-page';

const LOCK = `${LOCKS}/lock-1`;
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

function setup(
  answer: (call: Call) => Response | Promise<Response> | undefined = () => undefined,
  wrap: (page: ReactElement) => ReactElement = (page) => page,
) {
  storeSignIn({
    authToken: makeJwt({ exp: nowSeconds() + 600 }),
    refreshToken: 'r',
    privateKey: 'a',
    publicKey: 'b',
  });
  const stream = eventStream();
  const calls = stubFetch((call) => {
    const own = answer(call);
    if (own) return own;
    const path = call.url.split('?')[0];
    if (path === `${LOCKS}/events`) return stream.response;
    if (path === LOCK && call.method === 'GET') return json(sampleLock());
    if (path === `${LOCK}/user` && call.method === 'GET') return json([sampleShare()]);
    if (path === `${LOCK}/access-code` && call.method === 'GET')
      return json([{ accessCodeId: 'code-1', lockId: 'lock-1', name: 'Cleaner', code: '482913', kind: 'online', start: null, end: null, status: 'set', createdAt: 1_700_000_000 }]);
    if (path === `${LOCK}/log`)
      return json({
        items: [sampleEntry({ id: 'old', type: 'SHARE', subject: 'guest@example.com' })],
        nextCursor: null,
      });
    return json({ code: 404, message: 'Not found' }, 404);
  });
  renderRoute(wrap(<LockPage />), { path: '/:appId/locks/:lockId', initial: '/app-1/locks/lock-1' });
  return { calls, stream, u: userEvent.setup() };
}

const activity = () => screen.getByRole('region', { name: 'Activity' });
/** The activity card, drawn last of the cards under the header. */
const activityDrawn = () => screen.findByRole('region', { name: 'Activity' });
/** The non-blocking notice a save gives (the live badge is a status too), and no dialog to dismiss. */
const notice = (text: string) =>
  waitFor(() => {
    expect(screen.getAllByRole('status').map((s) => s.textContent)).toContain(text);
    expect(screen.queryByRole('dialog')).toBeNull();
  });

describe('Lock page', () => {
  it('shows the lock, its shares and its log, and follows the live events: state with a countdown, new entries on top', async () => {
    const { stream, calls } = setup();
    expect(await screen.findByRole('heading', { name: 'Front Door', level: 1 })).toBeInTheDocument();
    expect(await screen.findByText('guest@example.com')).toBeInTheDocument();
    expect(screen.getByText('Invited')).toBeInTheDocument();
    expect(await within(await activityDrawn()).findByText('Share')).toBeInTheDocument();
    expect(screen.getByText('Locked')).toBeInTheDocument();
    await screen.findByText('Live');
    expect(calls.find((c) => c.url.endsWith('/lock/events'))!.headers.Authorization).toMatch(/^Bearer /);

    stream.comment();
    stream.push(
      'lock',
      sampleLock({ state: { locked: false, connected: true, unlockedUntil: Date.now() + 4200 } }),
    );
    expect(await screen.findByText(/^Unlocked · locks in [45] s$/)).toBeInTheDocument();
    stream.push(
      'activity',
      sampleEntry({
        id: 'new',
        rejected: true,
        reason: 'Your access to this lock has ended',
        actor: { userId: 'u2', email: 'late@example.com', displayName: null },
      }),
    );
    const rows = await waitFor(() => {
      const r = within(activity()).getAllByRole('row').slice(1);
      expect(r).toHaveLength(2);
      return r;
    });
    expect(rows[0]).toHaveTextContent('late@example.com');
    expect(rows[0]).toHaveTextContent('Refused');
    expect(rows[0]).toHaveTextContent('Your access to this lock has ended');
    // The same entry again (a reconnect may repeat it) is not shown twice.
    stream.push(
      'activity',
      sampleEntry({ id: 'new', rejected: true, reason: 'Your access to this lock has ended' }),
    );
    stream.push('lock', sampleLock({ name: 'Back Door' }));
    expect(await screen.findByRole('heading', { name: 'Back Door', level: 1 })).toBeInTheDocument();
    expect(within(activity()).getAllByRole('row')).toHaveLength(3);
  });

  it('unlocks with a real signed operation: key certified once, a JWS with x5c that verifies against that key, sent as application/jwt', async () => {
    let refuse = false;
    const { calls, u } = setup((call) => {
      if (call.url === '/api/auth/certificate')
        return json({ certificateChain: ['bGVhZg==', 'Y2E='], userId: 'app-user-1' });
      if (call.url === '/api/device/lock-1/execute')
        return refuse
          ? json({ code: 403, message: 'You do not have access to this lock' }, 403)
          : noContent();
      return undefined;
    });
    await u.click(await screen.findByRole('button', { name: 'Unlock' }));
    await waitFor(() => expect(calls.filter((c) => c.url === '/api/device/lock-1/execute')).toHaveLength(1));

    const certify = calls.find((c) => c.url === '/api/auth/certificate')!;
    const raw = Buffer.from((certify.body as { ephemeralKey: string }).ephemeralKey, 'base64');
    expect(raw).toHaveLength(32);
    const execute = calls.find((c) => c.url === '/api/device/lock-1/execute')!;
    expect(execute.method).toBe('POST');
    expect(execute.headers['Content-Type']).toBe('application/jwt');
    const [header, payload, signature] = String(execute.body).split('.') as [string, string, string];
    expect(JSON.parse(Buffer.from(header, 'base64url').toString())).toEqual({
      alg: 'EdDSA',
      typ: 'JWT',
      x5c: ['bGVhZg==', 'Y2E='],
    });
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    expect(claims).toMatchObject({
      iss: 'app-user-1',
      sub: 'lock-1',
      operation: { type: 'MUTATE_LOCK', locked: false },
    });
    expect(claims.exp - claims.iat).toBeLessThanOrEqual(60);
    const key = createPublicKey({
      key: Buffer.concat([ED25519_SPKI_PREFIX, raw]),
      format: 'der',
      type: 'spki',
    });
    expect(verify(null, Buffer.from(`${header}.${payload}`), key, Buffer.from(signature, 'base64url'))).toBe(
      true,
    );

    refuse = true;
    await u.click(screen.getByRole('button', { name: 'Unlock' }));
    expect(await screen.findByRole('alertdialog', { name: 'Failed' })).toHaveTextContent(
      'The lock refused the unlock: You do not have access to this lock',
    );
    // The key and its certificate were kept: the second unlock did not register again.
    expect(calls.filter((c) => c.url === '/api/auth/certificate')).toHaveLength(1);
    const second = calls.filter((c) => c.url === '/api/device/lock-1/execute')[1]!;
    expect(JSON.parse(Buffer.from(String(second.body).split('.')[1]!, 'base64url').toString()).jti).not.toBe(
      claims.jti,
    );
  });

  it('shares to an email with role, days and hours: at least one day is required', async () => {
    const { calls, u } = setup((call) =>
      call.method === 'POST' && call.url === `${LOCK}/user` ? json(sampleShare(), 201) : undefined,
    );
    await u.click(await screen.findByRole('button', { name: 'Share lock' }));
    const dialog = await screen.findByRole('dialog', { name: 'Share lock' });
    await u.type(within(dialog).getByRole('textbox', { name: /Email/ }), 'new@example.com');
    await u.click(within(dialog).getByRole('switch', { name: 'Only on some days and hours' }));
    for (const day of ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday'])
      await u.click(within(dialog).getByRole('checkbox', { name: day }));
    expect(await within(dialog).findByText('Select minimum 1 day')).toBeInTheDocument();
    expect(within(dialog).getByRole('button', { name: 'Share lock' })).toBeDisabled();
    await u.click(within(dialog).getByRole('checkbox', { name: 'Saturday' }));
    await u.clear(within(dialog).getByRole('combobox', { name: 'Time zone' }));
    await u.type(within(dialog).getByRole('combobox', { name: 'Time zone' }), 'Europe/Berlin');
    await waitFor(() => expect(within(dialog).getByRole('button', { name: 'Share lock' })).toBeEnabled());
    await u.click(within(dialog).getByRole('button', { name: 'Share lock' }));
    await notice('The lock has been shared with new@example.com.');
    expect(calls.filter((c) => c.method === 'POST').map((c) => c.body)).toEqual([
      {
        email: 'new@example.com',
        role: 'USER',
        start: null,
        end: null,
        timeWindow: { start: '09:00', end: '17:00', timezone: 'Europe/Berlin', days: ['SATURDAY'] },
      },
    ]);
  }, 20_000); // many keystrokes: seconds on a busy 2-core host

  it('revokes a share only after confirming', async () => {
    const { calls, u } = setup((call) => (call.method === 'DELETE' ? noContent() : undefined));
    await u.click(await screen.findByRole('button', { name: 'Revoke access of guest@example.com' }));
    const confirm = await screen.findByRole('dialog', { name: 'Revoke this share?' });
    await u.click(within(confirm).getByRole('button', { name: 'Cancel' }));
    expect(calls.filter((c) => c.method === 'DELETE')).toHaveLength(0);
    await u.click(await screen.findByRole('button', { name: 'Revoke access of guest@example.com' }));
    await u.click(
      within(await screen.findByRole('dialog', { name: 'Revoke this share?' })).getByRole('button', {
        name: 'Revoke',
      }),
    );
    await waitFor(() =>
      expect(calls.filter((c) => c.method === 'DELETE').map((c) => c.url)).toEqual([
        `${LOCK}/user/${sampleShare().userId}`,
      ]),
    );
    await notice('Access revoked');
  });

  it('saves only the changed settings, and the location rule with its accuracy tier', async () => {
    const { calls, u } = setup((call) =>
      call.method === 'PUT'
        ? json(sampleLock({ settings: { unlockTime: 12, usageRequirements: {} } }))
        : undefined,
    );
    const unlockTime = await screen.findByRole('spinbutton', { name: 'Unlock time (seconds)' });
    await u.clear(unlockTime);
    await u.type(unlockTime, '61');
    expect(await screen.findByText('The unlock time must be between 1 and 60 seconds')).toBeInTheDocument();
    await u.clear(unlockTime);
    await u.type(unlockTime, '12');
    await u.click(screen.getByRole('button', { name: 'Save' }));
    await notice('The lock settings have been saved.');
    expect(calls.filter((c) => c.method === 'PUT').map((c) => c.body)).toEqual([
      { settings: { unlockTime: 12 } },
    ]);

    await u.click(await screen.findByRole('switch', { name: 'Require users to be near the lock' }));
    await u.type(screen.getByRole('spinbutton', { name: 'Latitude' }), '51.5');
    await u.type(screen.getByRole('spinbutton', { name: 'Longitude' }), '-0.12');
    await u.click(screen.getByRole('combobox', { name: 'Required accuracy' }));
    await u.click(await screen.findByRole('option', { name: 'Fine: position within 10 m' }));
    await u.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(calls.filter((c) => c.method === 'PUT')).toHaveLength(2));
    expect(calls.filter((c) => c.method === 'PUT')[1]!.body).toEqual({
      settings: {
        usageRequirements: {
          location: { latitude: 51.5, longitude: -0.12, radius: 50, accuracy: 'FINE', enabled: true },
        },
      },
    });
  });

  it('offers the offline grace as a choice or a number with a unit, says what it trades, and saves it in seconds', async () => {
    const { calls, u } = setup((call) =>
      call.method === 'PUT' ? json(sampleLock({ offlineGraceSeconds: 86_400 })) : undefined,
    );
    const settings = await screen.findByRole('region', { name: 'Settings' });
    expect(within(settings).getByText(/A shorter grace revokes a removed user faster .* access codes keep working\./)).toBeInTheDocument();
    await u.click(within(settings).getByRole('combobox', { name: 'Offline grace' }));
    await u.click(await screen.findByRole('option', { name: '1 day' }));
    await u.click(screen.getByRole('button', { name: 'Save' }));
    await notice('The lock settings have been saved.');
    expect(calls.filter((c) => c.method === 'PUT').map((c) => c.body)).toEqual([{ settings: {}, offlineGraceSeconds: 86_400 }]);

    await u.click(within(settings).getByRole('combobox', { name: 'Offline grace' }));
    await u.click(await screen.findByRole('option', { name: 'Other…' }));
    const amount = within(settings).getByRole('spinbutton', { name: 'Grace' });
    await u.clear(amount);
    await u.type(amount, '31');
    await u.click(within(settings).getByRole('combobox', { name: 'Unit' }));
    await u.click(await screen.findByRole('option', { name: 'days' }));
    expect(await within(settings).findByText(/The offline grace must be a whole number of seconds/)).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Save' })).toBeDisabled();
    await u.clear(amount);
    await u.type(amount, '12');
    await u.click(within(settings).getByRole('combobox', { name: 'Unit' }));
    await u.click(await screen.findByRole('option', { name: 'hours' }));
    await u.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(calls.filter((c) => c.method === 'PUT')).toHaveLength(2));
    expect(calls.filter((c) => c.method === 'PUT')[1]!.body).toEqual({ settings: {}, offlineGraceSeconds: 43_200 });
  });

  it('says in the settings which direct-access addresses a lock’s device may offer', async () => {
    const device = { deviceId: 'device-1', provisioned: true, connected: true, lastSeen: nowSeconds(), firmware: 'pi-relay 1.2.0' };
    setup((call) => (call.url.split('?')[0] === LOCK && call.method === 'GET' ? json(sampleLock({ device })) : undefined));
    const settings = await screen.findByRole('region', { name: 'Settings' });
    expect(await within(settings).findByText(/Only an address on a private network .* or the address the device connects from is listed/)).toBeInTheDocument();
  });

  it('shows no direct-access note for a sandbox lock', async () => {
    setup();
    const settings = await screen.findByRole('region', { name: 'Settings' });
    expect(await within(settings).findByLabelText('Unlock time (seconds)')).toBeInTheDocument();
    expect(within(settings).queryByText(/private network/)).toBeNull();
  });

  it('a share the server refuses keeps the form, with the message under its field and focus on it', async () => {
    const { u } = setup((call) =>
      call.method === 'POST' && call.url === `${LOCK}/user`
        ? json({ code: 400, message: 'Invalid request', errors: [{ path: 'email', message: 'Not a valid email' }] }, 400)
        : undefined,
    );
    await u.click(await screen.findByRole('button', { name: 'Share lock' }));
    const dialog = await screen.findByRole('dialog', { name: 'Share lock' });
    const email = within(dialog).getByRole('textbox', { name: /Email/ });
    await u.type(email, 'new@example.com');
    await u.click(within(dialog).getByRole('button', { name: 'Share lock' }));
    expect(await within(dialog).findByText('Not a valid email')).toBeInTheDocument();
    expect(email).toHaveValue('new@example.com');
    expect(email).toHaveFocus();
    expect(within(dialog).queryByText('Invalid request')).toBeNull();
  });

  it('a refused setting shows under its field, focused, with no Failed dialog', async () => {
    const { u } = setup((call) =>
      call.method === 'PUT'
        ? json({ code: 400, message: 'Invalid request', errors: [{ path: 'unlockTime', message: 'Too long for this lock' }] }, 400)
        : undefined,
    );
    const unlockTime = await screen.findByRole('spinbutton', { name: 'Unlock time (seconds)' });
    await u.clear(unlockTime);
    await u.type(unlockTime, '30');
    await u.click(screen.getByRole('button', { name: 'Save' }));
    expect(await screen.findByText('Too long for this lock')).toBeInTheDocument();
    expect(unlockTime).toHaveFocus();
    expect(screen.queryByRole('alertdialog', { name: 'Failed' })).toBeNull();
  });
  it('the log names who by their email, as the shares and History do, and a settings change in words', async () => {
    setup((call) =>
      call.url.split('?')[0] === `${LOCK}/log`
        ? json({
            items: [
              sampleEntry({
                id: 'settings',
                type: 'SETTINGS',
                subject: 'unlockTime',
                actor: { userId: 'u1', email: 'dana@example.com', displayName: 'Dana' },
              }),
            ],
            nextCursor: null,
          })
        : undefined,
    );
    const row = await waitFor(() => {
      const r = within(activity()).getAllByRole('row');
      expect(r).toHaveLength(2);
      return r[1]!;
    });
    expect(row).toHaveTextContent('dana@example.com changed: unlock time');
    expect(row).not.toHaveTextContent('unlockTime');
    expect(row).not.toHaveTextContent('Dana');
  });

  it('date pickers that write dates another way than the page say their format; none where they agree', async () => {
    const { u } = setup();
    const from = within(await screen.findByRole('region', { name: 'Activity' })).getByLabelText('From');
    // An English page in a British browser: its pickers write dd/mm/yyyy, as the page does.
    expect(from).not.toHaveAccessibleDescription(/Format/);
    await setLanguage('de');
    // A German page in that browser: the page writes 05.03.2024, the pickers still dd/mm/yyyy.
    await waitFor(() => expect(within(screen.getByRole('region', { name: 'Aktivität' })).getByLabelText('Von')).toHaveAccessibleDescription('Format: TT/MM/JJJJ'));
    await u.click(screen.getByRole('button', { name: 'Schloss teilen' }));
    const dialog = await screen.findByRole('dialog', { name: 'Schloss teilen' });
    expect(within(dialog).getByLabelText('Zugang ab (optional)')).toHaveAccessibleDescription('Format: TT/MM/JJJJ, hh:mm');
  });

  it('shows the door, its battery and its alarms, and follows them live', async () => {
    const { stream } = setup((call) =>
      call.url.split('?')[0] === LOCK && call.method === 'GET'
        ? json(sampleLock({ door: 'open', battery: 17, alarms: ['jammed', 'low_battery'] }))
        : undefined,
    );
    const door = await screen.findByRole('group', { name: 'Door' });
    expect(door).toHaveTextContent('Door: open');
    expect(door).toHaveTextContent('Battery 17 % (low)');
    expect(door).toHaveTextContent('Jammed');
    // A low battery is said on the battery's chip, not again as an alarm.
    expect(within(door).queryByText(/low_battery/)).toBeNull();
    await screen.findByText('Live');
    stream.push('lock', sampleLock({ door: 'closed', battery: 80, alarms: ['tampered'] }));
    await waitFor(() => expect(screen.getByRole('group', { name: 'Door' })).toHaveTextContent('Door: closed'));
    expect(screen.getByRole('group', { name: 'Door' })).toHaveTextContent('Battery 80 %');
    expect(screen.getByRole('group', { name: 'Door' })).not.toHaveTextContent('(low)');
    expect(screen.getByRole('group', { name: 'Door' })).toHaveTextContent('Tampered');
    expect(screen.getByRole('group', { name: 'Door' })).not.toHaveTextContent('Jammed');
    expect(screen.getByRole('group', { name: 'Door' })).not.toHaveTextContent('Offline');
    // A lock gone offline (a device, or a virtual lock made to) says so.
    stream.push('lock', sampleLock({ state: { locked: true, connected: false, unlockedUntil: null } }));
    await waitFor(() => expect(screen.getByRole('group', { name: 'Door' })).toHaveTextContent('Offline: the platform cannot reach the lock'));
  });

  it('a door that never reported says its state is unknown, with no battery', async () => {
    setup();
    const door = await screen.findByRole('group', { name: 'Door' });
    expect(door).toHaveTextContent('Door: unknown');
    expect(door).not.toHaveTextContent('Battery');
  });

  it('the log says how each access was made, who reported it, what the door decided offline, a battery level, and a gap as a warning', async () => {
    const { stream } = setup((call) =>
      call.url.split('?')[0] === `${LOCK}/log`
        ? json({
            items: [
              sampleEntry({ id: 'gap', type: 'AUDIT_GAP', source: 'device', reason: 'events 5–7 missing', actor: { userId: null, email: null, displayName: null } }),
              sampleEntry({ id: 'battery', type: 'BATTERY', source: 'device', value: 17, actor: { userId: null, email: null, displayName: null } }),
              sampleEntry({ id: 'code', method: 'access_code', accessCodeId: 'code-1', source: 'device', offline: true, actor: { userId: null, email: null, displayName: null } }),
              sampleEntry({ id: 'phone', method: 'mobile_key' }),
              sampleEntry({ id: 'portal', method: 'console' }),
              sampleEntry({ id: 'tile', method: 'tile', rejected: true, reason: 'Your access to this lock has ended' }),
              sampleEntry({ id: 'local', method: 'local' }),
            ],
            nextCursor: null,
          })
        : undefined,
    );
    const rows = await waitFor(() => {
      const r = within(activity()).getAllByRole('row').slice(1);
      expect(r).toHaveLength(7);
      return r;
    });
    expect(rows[0]).toHaveTextContent('Gap in the door’s record');
    expect(rows[0]).toHaveTextContent('events 5–7 missing');
    expect(within(rows[0]!).getByRole('alert')).toBeInTheDocument();
    expect(rows[1]).toHaveTextContent('Battery');
    expect(rows[1]).toHaveTextContent('Battery 17 %');
    expect(rows[1]).toHaveTextContent('Reported by the door');
    expect(rows[1]).not.toHaveTextContent('Accepted');
    await waitFor(() => expect(rows[2]).toHaveTextContent('with access code “Cleaner”'));
    expect(rows[2]).toHaveTextContent('Reported by the door');
    expect(rows[2]).toHaveTextContent('Decided offline');
    expect(rows[2]).not.toHaveTextContent('System');
    expect(rows[3]).toHaveTextContent('dev@example.com by phone key');
    expect(rows[3]).toHaveTextContent('Reported by the platform');
    expect(rows[3]).not.toHaveTextContent('Decided offline');
    expect(rows[4]).toHaveTextContent('from the portal');
    expect(rows[5]).toHaveTextContent('from a tile');
    expect(rows[5]).toHaveTextContent('Refused');
    expect(rows[6]).toHaveTextContent('at the door’s local network');

    // A code typed at the door arrives live, named by its code.
    await screen.findByText('Live');
    stream.push('activity', sampleEntry({ id: 'live', method: 'access_code', accessCodeId: 'code-1', source: 'device', actor: { userId: null, email: null, displayName: null } }));
    await waitFor(() => expect(within(activity()).getAllByRole('row')[1]).toHaveTextContent('with access code “Cleaner”'));
  });

  it('Download CSV fetches the lock’s log.csv for the range shown, with the session’s token, and saves it', async () => {
    const saved: { name: string; href: string }[] = [];
    const click = vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      saved.push({ name: this.download, href: this.href });
    });
    const blobs: Blob[] = [];
    vi.spyOn(URL, 'createObjectURL').mockImplementation((blob) => (blobs.push(blob as Blob), 'blob:csv-1'));
    vi.spyOn(URL, 'revokeObjectURL').mockImplementation(() => undefined);
    const { calls, u } = setup((call) =>
      call.url.split('?')[0] === `${LOCK}/log.csv`
        ? new Response('time,lock_id\r\n', { headers: { 'Content-Type': 'text/csv', 'Content-Disposition': 'attachment; filename="front-door.csv"' } })
        : undefined,
    );
    const from = within(await screen.findByRole('region', { name: 'Activity' })).getByLabelText('From');
    await u.type(from, '2024-03-05');
    await u.click(within(await screen.findByRole('region', { name: 'Activity' })).getByRole('button', { name: 'Download CSV' }));
    await waitFor(() => expect(saved).toEqual([{ name: 'front-door.csv', href: 'blob:csv-1' }]));
    const csv = calls.find((c) => c.url.startsWith(`${LOCK}/log.csv`))!;
    expect(csv.url).toBe(`${LOCK}/log.csv?start=${Date.parse('2024-03-05T00:00:00') / 1000}`);
    expect(csv.headers.Authorization).toMatch(/^Bearer /);
    expect(await blobs[0]!.text()).toBe('time,lock_id\r\n');
    expect(await screen.findByText('The activity has been downloaded.')).toBeInTheDocument();
    click.mockRestore();
  });

  it('a virtual lock offers Simulate; a lock with a device does not', async () => {
    setup((call) => (call.url.split('?')[0] === LOCK && call.method === 'GET' ? json(sampleLock({ device: null })) : undefined));
    expect(await screen.findByRole('button', { name: 'Simulate' })).toBeInTheDocument();
  });

  it('a lock with a device offers no Simulate', async () => {
    const device = { deviceId: 'device-1', provisioned: true, connected: true, lastSeen: nowSeconds(), firmware: 'pi-relay 1.2.0' };
    setup((call) => (call.url.split('?')[0] === LOCK && call.method === 'GET' ? json(sampleLock({ device })) : undefined));
    expect(await screen.findByRole('button', { name: 'Unlock' })).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Simulate' })).toBeNull();
  });

  it('the lock page has its access codes, read again when the live activity brings a code created elsewhere', async () => {
    let second = false;
    const code = (id: string, name: string, digits: string) => ({ accessCodeId: id, lockId: 'lock-1', name, code: digits, kind: 'online', start: null, end: null, status: 'set', createdAt: 1_700_000_000 });
    const { stream } = setup((call) =>
      call.url === `${LOCK}/access-code` && call.method === 'GET'
        ? json(second ? [code('code-1', 'Cleaner', '482913'), code('code-2', 'Plumber', '5521')] : [code('code-1', 'Cleaner', '482913')])
        : undefined,
    );
    const codes = await screen.findByRole('region', { name: 'Access codes' });
    expect(await within(codes).findByText('482913')).toBeInTheDocument();
    await screen.findByText('Live');
    second = true;
    stream.push('activity', sampleEntry({ id: 'made', type: 'ACCESS_CODE', subject: 'Plumber', timestamp: Date.now() / 1000 + 1 }));
    expect(await within(codes).findByText('5521')).toBeInTheDocument();
  });

  it('draws the cards under the header one per commit, top to bottom, once the codes and tiles they show are in', async () => {
    const headings = ['device', 'shares', 'access-codes', 'tiles', 'settings', 'activity'].map((c) => `${c}-heading`);
    const drawn = () => headings.filter((id) => document.getElementById(id) !== null);
    // What each commit left on the page: the cards drawn, and whether the codes and tiles had been asked for.
    const commits: { cards: string[]; asked: boolean }[] = [];
    let calls: Call[] = [];
    const asked = (path: string) => calls.some((c) => c.url.split('?')[0] === `${LOCK}/${path}`);
    ({ calls } = setup(undefined, (page) => (
      <Profiler id="lock" onRender={() => commits.push({ cards: drawn(), asked: asked('access-code') && asked('tile') })}>
        {page}
      </Profiler>
    )));
    await activityDrawn();
    const firstWithCards = commits.findIndex((c) => c.cards.length > 0);
    expect(commits[firstWithCards]!.asked).toBe(true);
    for (const [i, commit] of commits.entries()) {
      const before = i === 0 ? [] : commits[i - 1]!.cards;
      // Each commit adds at most the next card, and takes none away.
      expect(commit.cards).toEqual(headings.slice(0, commit.cards.length));
      expect(commit.cards.length - before.length).toBeGreaterThanOrEqual(0);
      expect(commit.cards.length - before.length).toBeLessThanOrEqual(1);
    }
    expect(drawn()).toEqual(headings);
  });

  it('reads the shares, log, access codes and tiles once as it opens: the cards draw that read', async () => {
    const { calls } = setup((call) => (call.url === `${LOCK}/tile` && call.method === 'GET' ? json([]) : undefined));
    await within(await activityDrawn()).findByText('Share');
    await screen.findByText('Live');
    const reads = (path: string) => calls.filter((c) => c.method === 'GET' && c.url.split('?')[0] === `${LOCK}/${path}`).length;
    expect(['user', 'log', 'access-code', 'tile'].map(reads)).toEqual([1, 1, 1, 1]);
  });

  it('keeps its cards while a new date range loads: only the activity waits for it', async () => {
    let answer = () => {};
    const ranged = new Promise<void>((resolve) => (answer = resolve));
    const { u } = setup((call) =>
      call.url.startsWith(`${LOCK}/log?start=`)
        ? ranged.then(() => json({ items: [sampleEntry({ id: 'old', type: 'SHARE', subject: 'guest@example.com' })], nextCursor: null }))
        : undefined,
    );
    await within(await activityDrawn()).findByText('Share');
    const shares = screen.getByRole('region', { name: 'Shared with' });
    await u.type(within(activity()).getByLabelText('From'), '2024-01-01');
    expect(await within(activity()).findByRole('status', { name: 'Loading…' })).toBeInTheDocument();
    expect(screen.getByRole('region', { name: 'Shared with' })).toBe(shares);
    answer();
    expect(await within(activity()).findByText('Share')).toBeInTheDocument();
    expect(screen.getByRole('region', { name: 'Shared with' })).toBe(shares);
  });

  it('a virtual lock’s page never asks for a device, also when live events about the lock arrive', async () => {
    const { calls, stream } = setup((call) =>
      call.url.split('?')[0] === LOCK && call.method === 'GET' ? json(sampleLock({ device: null })) : undefined,
    );
    const device = await screen.findByRole('region', { name: /^Device$/ });
    expect(within(device).getByRole('button', { name: 'Connect a device' })).toBeInTheDocument();
    await activityDrawn();
    await screen.findByText('Live');
    stream.push('lock', sampleLock({ device: null, door: 'open' }));
    stream.push('activity', sampleEntry({ id: 'opened', type: 'DOOR_OPENED', source: 'device', actor: { userId: null, email: null, displayName: null } }));
    await waitFor(() => expect(screen.getByRole('group', { name: 'Door' })).toHaveTextContent('Door: open'));
    expect(calls.filter((c) => c.url.includes('/device'))).toEqual([]);
  });
});
