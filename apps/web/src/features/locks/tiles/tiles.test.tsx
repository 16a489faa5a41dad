import { cleanup, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { tileErrors, tileSignInResponseSchema, type LockTile, type TileSignInResponse } from '@latchkey/contract';
import { clearSession, storeSignIn } from '../../../lib/session';
import { json, makeJwt, noContent, nowSeconds, renderRoute, stubFetch } from '../../../test/helpers';
import { LOCKS, sampleLock } from '../test-fixtures';
import { TilePage } from './tile-page';
import { TILE_SIGN_IN_KEY } from './tile-session';
import { TilesCard } from './tiles-card';

const TILES = `${LOCKS}/lock-1/tile`;
const TILE_ID = '3f0c2a8e-5b1d-4c7e-9a2f-0d1e2f3a4b5c';
const tile = (over: Partial<LockTile> = {}): LockTile => ({
  tileId: TILE_ID,
  name: null,
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

describe('Tiles card: names', () => {
  it('shows an unnamed tile as such, names it, and then calls it by its name', async () => {
    signIn();
    let tiles: LockTile[] = [tile()];
    const calls = stubFetch((call) => {
      if (call.url === TILES && call.method === 'GET') return json(tiles);
      if (call.url === `${TILES}/${TILE_ID}` && call.method === 'PUT') {
        tiles = [tile({ name: (call.body as { name: string }).name })];
        return json(tiles[0]);
      }
      return json({ code: 404, message: 'Not found' }, 404);
    });
    renderRoute(<TilesCard appId="app-1" lockId="lock-1" />);
    const list = await screen.findByRole('list', { name: 'Tiles' });
    expect(within(list).getByText('Unnamed tile')).toBeInTheDocument();
    const u = userEvent.setup();
    await u.click(screen.getByRole('button', { name: 'Rename tile 3f0c2a8e' }));
    const dialog = await screen.findByRole('dialog', { name: 'Name this tile' });
    await u.type(within(dialog).getByRole('textbox', { name: /Tile name/ }), 'Sticker by the gate');
    await u.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(await within(list).findByText('Sticker by the gate')).toBeInTheDocument();
    expect(within(list).getByText(TILE_ID)).toBeInTheDocument();
    expect(calls.find((c) => c.method === 'PUT')?.body).toEqual({ name: 'Sticker by the gate' });
    expect(await screen.findByRole('button', { name: 'Remove tile Sticker by the gate' })).toBeInTheDocument();
  });
});

describe('Tile page (/t/{tileId})', () => {
  beforeEach(() => sessionStorage.clear());

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

  it('shows whose door it is (the application’s name and logo) and speaks to the person at the door, not to developers', async () => {
    signIn();
    stubFetch((call) => {
      if (call.url === `/api/tile/${TILE_ID}/branding`) return json({ name: 'Acme Access', logoUrl: 'https://cdn.example.com/acme.png', primaryColour: '#AA2200' });
      if (call.url === `/api/tile/${TILE_ID}/lock`) return json([sampleLock({ name: 'Side Gate' })]);
      return json({ code: 404, message: 'Not found' }, 404);
    });
    const { container } = renderRoute(<TilePage />, { path: '/t/:tileId', initial: `/t/${TILE_ID}` });
    const door = await screen.findByRole('region', { name: 'Side Gate' });
    expect(await screen.findByText('Acme Access')).toBeInTheDocument();
    expect(container.querySelector('img[src="https://cdn.example.com/acme.png"]')).not.toBeNull();
    expect(within(door).getByText('Opens this door from your phone, with a key that stays in this browser.')).toBeInTheDocument();
    expect(screen.queryByText(/your users’ apps/)).not.toBeInTheDocument();
  });

  it('says so when the tile opens nothing for this user', async () => {
    signIn();
    stubFetch(() => json({ code: 404, message: 'No devices associated with this tile' }, 404));
    renderRoute(<TilePage />, { path: '/t/:tileId', initial: `/t/${TILE_ID}` });
    expect(await screen.findByText('This code opens no door you have access to.')).toBeInTheDocument();
  });
});

describe('Tile page signed out: a shared user signs in with an emailed link', () => {
  const LOCK_USER_TOKEN = 'lock-user.token.sig';
  const signedIn: TileSignInResponse = tileSignInResponseSchema.parse({
    authToken: LOCK_USER_TOKEN,
    userId: 'app-user-7',
    expiresAt: nowSeconds() + 12 * 3600,
  });
  beforeEach(() => {
    sessionStorage.clear();
    // No portal session either (its snapshot outlives the storage the suite clears).
    clearSession();
  });
  const page = (initial = `/t/${TILE_ID}`) => renderRoute(<TilePage />, { path: '/t/:tileId', initial });

  it('asks for the email address (outlined field, the contract’s message for a bad one), then says to check the inbox', async () => {
    const calls = stubFetch((call) =>
      call.url === `/api/tile/${TILE_ID}/sign-in` ? json({ message: tileErrors.signInSent }, 202) : json({ code: 404, message: 'Not found' }, 404),
    );
    page();
    expect(await screen.findByRole('heading', { name: 'Sign in to open the door', level: 2 })).toBeInTheDocument();
    const field = screen.getByRole('textbox', { name: 'Email address' });
    expect(field.closest('.MuiOutlinedInput-root')).not.toBeNull();
    const u = userEvent.setup();
    await u.type(field, 'not-an-email');
    await u.click(screen.getByRole('button', { name: 'Email me a sign-in link' }));
    expect(await screen.findByText('Invalid email address')).toBeInTheDocument();
    expect(calls.some((c) => c.method === 'POST')).toBe(false);
    await u.clear(field);
    await u.type(field, 'Door.User@example.com');
    await u.click(screen.getByRole('button', { name: 'Email me a sign-in link' }));
    expect(await screen.findByRole('heading', { name: 'Check your email' })).toBeInTheDocument();
    expect(screen.getByRole('status')).toHaveTextContent('Door.User@example.com');
    expect(screen.getByRole('status')).toHaveTextContent('15 minutes');
    const sent = calls.find((c) => c.method === 'POST')!;
    expect(sent.body).toEqual({ email: 'Door.User@example.com' });
    expect(sent.headers.Authorization).toBeUndefined();
    // No portal session and no sign-in: nothing else was asked of the API but the tile's public branding,
    // and nothing carried a token.
    expect(calls.filter((c) => c.url !== `/api/tile/${TILE_ID}/branding`)).toHaveLength(1);
    expect(calls.every((c) => c.headers.Authorization === undefined)).toBe(true);
    await u.click(screen.getByRole('button', { name: 'Use another address' }));
    expect(await screen.findByRole('textbox', { name: 'Email address' })).toBeInTheDocument();
  });

  it('shows a refusal (too many requests) in the reader’s words', async () => {
    stubFetch(() => json({ code: 429, message: 'Too many attempts. Please wait a moment and try again.' }, 429, { 'retry-after': '60' }));
    page();
    const u = userEvent.setup();
    await u.type(await screen.findByRole('textbox', { name: 'Email address' }), 'door.user@example.com');
    await u.click(screen.getByRole('button', { name: 'Email me a sign-in link' }));
    expect(await screen.findByRole('alert')).toHaveTextContent(/Too many attempts/);
    expect(screen.queryByRole('heading', { name: 'Check your email' })).not.toBeInTheDocument();
  });

  it('spends #signin= once, keeps the lock-user token in sessionStorage, strips the link from the URL, lists the doors and signs out', async () => {
    const calls = stubFetch((call) => {
      if (call.url === '/api/tile/sign-in/verify') return json(signedIn);
      if (call.url === `/api/tile/${TILE_ID}/lock`) return json([sampleLock({ name: 'Side Gate' })]);
      return json({ code: 404, message: 'Not found' }, 404);
    });
    const { router } = page(`/t/${TILE_ID}#signin=the-secret_1`);
    const door = await screen.findByRole('region', { name: 'Side Gate' });
    expect(within(door).getByRole('button', { name: 'Unlock' })).toBeEnabled();
    expect(calls.filter((c) => c.url === '/api/tile/sign-in/verify').map((c) => c.body)).toEqual([{ token: 'the-secret_1' }]);
    expect(router.state.location.search).toBe('');
    expect(router.state.location.hash).toBe('');
    expect(JSON.parse(sessionStorage.getItem(TILE_SIGN_IN_KEY)!)).toEqual(signedIn);
    // The doors are read with the lock-user token; the portal's session is left alone.
    expect(calls.find((c) => c.url === `/api/tile/${TILE_ID}/lock`)!.headers.Authorization).toBe(`Bearer ${LOCK_USER_TOKEN}`);
    expect(localStorage.getItem('token')).toBeNull();
    const u = userEvent.setup();
    await u.click(screen.getByRole('button', { name: 'Sign out' }));
    expect(await screen.findByRole('textbox', { name: 'Email address' })).toBeInTheDocument();
    expect(sessionStorage.getItem(TILE_SIGN_IN_KEY)).toBeNull();
    expect(screen.queryByRole('region', { name: 'Side Gate' })).not.toBeInTheDocument();
  });

  it('still spends a link mailed with ?signin= in its query, and strips it from the URL', async () => {
    const calls = stubFetch((call) => {
      if (call.url === '/api/tile/sign-in/verify') return json(signedIn);
      if (call.url === `/api/tile/${TILE_ID}/lock`) return json([sampleLock({ name: 'Side Gate' })]);
      return json({ code: 404, message: 'Not found' }, 404);
    });
    const { router } = page(`/t/${TILE_ID}?signin=older-secret`);
    expect(await screen.findByRole('region', { name: 'Side Gate' })).toBeInTheDocument();
    expect(calls.filter((c) => c.url === '/api/tile/sign-in/verify').map((c) => c.body)).toEqual([{ token: 'older-secret' }]);
    expect(router.state.location.search).toBe('');
  });

  it('unlocks with the lock-user token: its own key certified and the signed operation sent with that token', async () => {
    sessionStorage.setItem(TILE_SIGN_IN_KEY, JSON.stringify(signedIn));
    const calls = stubFetch((call) => {
      if (call.url === `/api/tile/${TILE_ID}/lock`) return json([sampleLock({ name: 'Side Gate' })]);
      if (call.url === '/api/auth/certificate') return json({ certificateChain: ['bGVhZg==', 'Y2E='], userId: 'app-user-7' });
      if (call.url.endsWith('/execute')) return noContent();
      return json({ code: 404, message: 'Not found' }, 404);
    });
    page();
    const door = await screen.findByRole('region', { name: 'Side Gate' });
    await userEvent.setup().click(within(door).getByRole('button', { name: 'Unlock' }));
    await waitFor(() => expect(calls.filter((c) => c.url.endsWith('/execute'))).toHaveLength(1));
    const certify = calls.find((c) => c.url === '/api/auth/certificate')!;
    const execute = calls.find((c) => c.url.endsWith('/execute'))!;
    expect(certify.headers.Authorization).toBe(`Bearer ${LOCK_USER_TOKEN}`);
    expect(execute.headers.Authorization).toBe(`Bearer ${LOCK_USER_TOKEN}`);
    expect(execute.headers['Content-Type']).toBe('application/jwt');
    const claims = JSON.parse(Buffer.from(String(execute.body).split('.')[1]!, 'base64url').toString());
    expect(claims).toMatchObject({ iss: 'app-user-7', operation: { type: 'MUTATE_LOCK', locked: false } });
    // No second factor for an application user: no code was asked for.
    expect(calls.some((c) => c.url.includes('/auth/certificate/verify'))).toBe(false);
  });

  it('a spent or expired link says so above the email form; a token the API no longer takes is forgotten', async () => {
    stubFetch((call) =>
      call.url === '/api/tile/sign-in/verify'
        ? json({ code: 400, message: tileErrors.signInLinkUsed }, 400)
        : json({ code: 404, message: 'Not found' }, 404),
    );
    page(`/t/${TILE_ID}#signin=used`);
    expect(await screen.findByText(tileErrors.signInLinkUsed)).toBeInTheDocument();
    expect(screen.getByRole('textbox', { name: 'Email address' })).toBeInTheDocument();
    cleanup();

    sessionStorage.setItem(TILE_SIGN_IN_KEY, JSON.stringify(signedIn));
    stubFetch(() => json({ code: 401, message: 'Unauthorized' }, 401));
    page();
    expect(await screen.findByRole('textbox', { name: 'Email address' })).toBeInTheDocument();
    expect(sessionStorage.getItem(TILE_SIGN_IN_KEY)).toBeNull();
  });
});
