import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import type { LockTile } from '@latchkey/contract';
import { storeSignIn } from '../../../lib/session';
import { json, makeJwt, noContent, nowSeconds, renderRoute, stubFetch } from '../../../test/helpers';
import { LOCKS, sampleLock } from '../test-fixtures';
import { TilePage } from './tile-page';
import { TilesCard } from './tiles-card';

const TILES = `${LOCKS}/lock-1/tile`;
const TILE_ID = '3f0c2a8e-5b1d-4c7e-9a2f-0d1e2f3a4b5c';
const tile = (over: Partial<LockTile> = {}): LockTile => ({
  tileId: TILE_ID,
  url: `http://localhost/t/${TILE_ID}`,
  otherLockIds: [],
  createdAt: 1_800_000_000,
  ...over,
});

function signIn() {
  storeSignIn({
    authToken: makeJwt({ exp: nowSeconds() + 600 }),
    refreshToken: 'r',
    privateKey: 'a',
    publicKey: 'b',
  });
}

describe('Tiles card (lock page)', () => {
  it('lists tiles, makes a new one and shows its server-drawn QR code, removes one after confirming', async () => {
    signIn();
    let tiles: LockTile[] = [tile({ otherLockIds: ['lock-2'] })];
    const calls = stubFetch((call) => {
      if (call.url === TILES && call.method === 'GET') return json(tiles);
      if (call.url === TILES && call.method === 'POST') {
        const made = tile({
          tileId: '11111111-2222-4333-8444-555555555555',
          url: 'http://localhost/t/11111111-2222-4333-8444-555555555555',
        });
        tiles = [...tiles, made];
        return json(made, 201);
      }
      if (call.url.endsWith('/qr'))
        return new Response('<svg xmlns="http://www.w3.org/2000/svg"></svg>', {
          headers: { 'content-type': 'image/svg+xml' },
        });
      if (call.method === 'DELETE') {
        tiles = tiles.filter((t) => !call.url.endsWith(t.tileId));
        return noContent();
      }
      return json({ code: 404, message: 'Not found' }, 404);
    });
    renderRoute(<TilesCard appId="app-1" lockId="lock-1" />);
    const list = await screen.findByRole('list', { name: 'Tiles' });
    expect(within(list).getByText(TILE_ID)).toBeInTheDocument();
    expect(within(list).getByText('Also opens 1 other lock')).toBeInTheDocument();
    const u = userEvent.setup();
    await u.click(screen.getByRole('button', { name: 'New tile' }));
    const dialog = await screen.findByRole('dialog', { name: 'Tile QR code' });
    const img = await within(dialog).findByRole('img', {
      name: /QR code for http:\/\/localhost\/t\/11111111/,
    });
    expect(img.getAttribute('src')).toMatch(/^data:image\/svg\+xml/);
    expect(
      within(dialog).getByRole('link', { name: 'http://localhost/t/11111111-2222-4333-8444-555555555555' }),
    ).toBeInTheDocument();
    expect(calls.some((c) => c.method === 'POST' && c.url === TILES)).toBe(true);
    await u.click(within(dialog).getByRole('button', { name: 'Done' }));
    await u.click(screen.getByRole('button', { name: 'Remove tile 3f0c2a8e' }));
    await u.click(
      within(await screen.findByRole('dialog', { name: 'Remove this tile?' })).getByRole('button', {
        name: 'Remove',
      }),
    );
    await waitFor(() => expect(screen.queryByText(TILE_ID)).not.toBeInTheDocument());
    expect(calls.some((c) => c.method === 'DELETE' && c.url === `${TILES}/${TILE_ID}`)).toBe(true);
  });
});

describe('Tile page (/t/{tileId})', () => {
  it('shows the doors behind the tile with the lock page’s Unlock', async () => {
    signIn();
    stubFetch((call) =>
      call.url === `/api/tile/${TILE_ID}/lock`
        ? json([sampleLock({ name: 'Side Gate' })])
        : json({ code: 404, message: 'Not found' }, 404),
    );
    renderRoute(<TilePage />, { path: '/t/:tileId', initial: `/t/${TILE_ID}` });
    const door = await screen.findByRole('region', { name: 'Side Gate' });
    expect(within(door).getByText('Locked')).toBeInTheDocument();
    expect(within(door).getByRole('button', { name: 'Unlock' })).toBeEnabled();
  });

  it('says so when the tile opens nothing for this user', async () => {
    signIn();
    stubFetch(() => json({ code: 404, message: 'No devices associated with this tile' }, 404));
    renderRoute(<TilePage />, { path: '/t/:tileId', initial: `/t/${TILE_ID}` });
    expect(await screen.findByText('This code opens no door you have access to.')).toBeInTheDocument();
  });
});
