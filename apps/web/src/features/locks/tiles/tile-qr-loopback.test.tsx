import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import type { LockTile, PlatformSetup } from '@latchkey/contract';
import { storeSignIn } from '../../../lib/session';
import { json, makeJwt, nowSeconds, renderRoute, stubFetch } from '../../../test/helpers';
import { LOCKS } from '../test-fixtures';
import { TilesCard } from './tiles-card';

const TILES = `${LOCKS}/lock-1/tile`;
const TILE_ID = '11111111-2222-4333-8444-555555555555';
const setup = (over: Partial<PlatformSetup>): PlatformSetup => ({
  publicUrl: 'http://localhost:3000',
  publicUrlIsLoopback: true,
  brokerUrl: 'mqtts://localhost:8883',
  brokerUrlIsLoopback: true,
  networkAddresses: ['192.168.1.20'],
  devicePackage: null,
  ...over,
});

/** A new tile's QR code, against a fake API whose GET /platform/setup the test sets. */
async function openQr(platform: PlatformSetup) {
  storeSignIn({
    authToken: makeJwt({ exp: nowSeconds() + 600 }),
    refreshToken: 'r',
    privateKey: 'a',
    publicKey: 'b',
  });
  const made: LockTile = {
    tileId: TILE_ID,
    name: null,
    url: `${platform.publicUrl}/t/${TILE_ID}`,
    otherLockIds: [],
    createdAt: 1_800_000_000,
  };
  stubFetch((call) => {
    if (call.url === '/api/platform/setup') return json(platform);
    if (call.url === TILES && call.method === 'GET') return json([]);
    if (call.url === TILES && call.method === 'POST') return json(made, 201);
    if (call.url.endsWith('/qr'))
      return new Response('<svg xmlns="http://www.w3.org/2000/svg"></svg>', {
        headers: { 'content-type': 'image/svg+xml' },
      });
    return json({ code: 404, message: 'Not found' }, 404);
  });
  renderRoute(<TilesCard appId="app-1" lockId="lock-1" />);
  await userEvent.setup().click(await screen.findByRole('button', { name: 'New tile' }));
  const dialog = await screen.findByRole('dialog', { name: 'Tile QR code' });
  await within(dialog).findByRole('img', { name: /QR code for/ });
  return dialog;
}

describe('a tile’s QR code and PUBLIC_URL', () => {
  it('says beside the code when PUBLIC_URL is a loopback address a phone cannot reach, with the command to change it', async () => {
    const dialog = await openQr(setup({}));
    const notice = (
      await within(dialog).findByText('A Raspberry Pi or a phone cannot reach http://localhost:3000')
    ).closest<HTMLElement>('[role="alert"]')!;
    expect(
      within(notice).getByRole('region', { name: 'Restart with PUBLIC_URL: http://192.168.1.20:3000' }),
    ).toHaveTextContent('PUBLIC_URL=http://192.168.1.20:3000 scripts/latchkey start');
  });

  it('says nothing when PUBLIC_URL is reachable, even if only the devices’ broker URL is loopback', async () => {
    const dialog = await openQr(setup({ publicUrl: 'http://192.168.1.20:3000', publicUrlIsLoopback: false }));
    expect(
      within(dialog).getByRole('link', { name: `http://192.168.1.20:3000/t/${TILE_ID}` }),
    ).toBeInTheDocument();
    expect(within(dialog).queryByRole('alert')).toBeNull();
  });
});
