import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import type { OwnerSite } from '@latchkey/contract';
import { storeSignIn } from '../../../lib/session';
import { json, makeJwt, noContent, nowSeconds, renderRoute, stubFetch } from '../../../test/helpers';
import { LOCKS, sampleLock } from '../test-fixtures';
import { SitesCard } from './sites-card';

const SITES = '/api/platform/application/app-1/site';
const site = (over: Partial<OwnerSite>): OwnerSite => ({
  id: 's-1',
  name: 'Head Office',
  colour: '#00283C',
  latitude: 0,
  longitude: 0,
  radius: 0,
  passBackground: '#00283C',
  created: '2027-01-01T00:00:00.000Z',
  updated: '2027-01-01T00:00:00.000Z',
  lockIds: [],
  ...over,
});

describe('Sites card (Locks page)', () => {
  it('adds a site, moves a lock into it, renames it, and refuses a taken name in place', async () => {
    storeSignIn({
      authToken: makeJwt({ exp: nowSeconds() + 600 }),
      refreshToken: 'r',
      privateKey: 'a',
      publicKey: 'b',
    });
    let sites: OwnerSite[] = [site({ id: 's-0', name: 'Depot' })];
    const calls = stubFetch((call) => {
      if (call.url === SITES && call.method === 'GET') return json(sites);
      if (call.url === SITES && call.method === 'POST') {
        const name = (call.body as { name: string }).name;
        if (name === 'Depot')
          return json({ code: 409, message: 'This application already has a site with this name' }, 409);
        sites = [...sites, site({ name })];
        return json(sites.at(-1), 201);
      }
      if (call.url === `${LOCKS}/lock-1/site`) {
        sites = sites.map((s) => ({
          ...s,
          lockIds: s.id === (call.body as { siteId: string }).siteId ? ['lock-1'] : [],
        }));
        return noContent();
      }
      if (call.url === `${SITES}/s-1` && call.method === 'PUT') {
        sites = sites.map((s) => (s.id === 's-1' ? { ...s, name: (call.body as { name: string }).name } : s));
        return json(sites[1]);
      }
      return json({ code: 404, message: 'Not found' }, 404);
    });
    renderRoute(<SitesCard appId="app-1" locks={[sampleLock()]} />);
    const u = userEvent.setup();
    const sitesList = await screen.findByRole('list', { name: 'Sites' });
    expect(within(sitesList).getByText('Depot')).toBeInTheDocument();
    await u.click(screen.getByRole('button', { name: 'Add site' }));
    let dialog = await screen.findByRole('dialog', { name: 'Add site' });
    await u.type(within(dialog).getByRole('textbox'), 'Depot');
    await u.click(within(dialog).getByRole('button', { name: 'Add site' }));
    expect(
      await within(dialog).findByText('This application already has a site with this name'),
    ).toBeInTheDocument();
    await u.clear(within(dialog).getByRole('textbox'));
    await u.type(within(dialog).getByRole('textbox'), 'Head Office');
    await u.click(within(dialog).getByRole('button', { name: 'Add site' }));
    await within(sitesList).findByText('Head Office');
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    await u.selectOptions(screen.getByRole('combobox', { name: 'Front Door' }), 'Head Office');
    await waitFor(() =>
      expect(
        calls.some(
          (c) => c.url === `${LOCKS}/lock-1/site` && (c.body as { siteId: string }).siteId === 's-1',
        ),
      ).toBe(true),
    );
    expect(await within(sitesList).findByText('1 lock')).toBeInTheDocument();
    await u.click(screen.getByRole('button', { name: 'Rename Head Office' }));
    dialog = await screen.findByRole('dialog', { name: 'Rename site' });
    await u.clear(within(dialog).getByRole('textbox'));
    await u.type(within(dialog).getByRole('textbox'), 'HQ');
    await u.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(await within(sitesList).findByText('HQ')).toBeInTheDocument();
  });

  it('writes each lock’s name above its site choice, never over "No site"', async () => {
    storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600 }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
    stubFetch((call) => (call.url === SITES ? json([site({})]) : json({ code: 404, message: 'Not found' }, 404)));
    renderRoute(<SitesCard appId="app-1" locks={[sampleLock()]} />);
    const select = await screen.findByRole('combobox', { name: 'Front Door' });
    expect(select).toHaveDisplayValue('No site');
    // MUI draws an unshrunk label inside the field, on top of the chosen option's text.
    const label = document.querySelector(`label[for="${select.id}"]`);
    expect(label).toHaveAttribute('data-shrink', 'true');
  });
});
