import { expect, type APIRequestContext, type Page } from '@playwright/test';
import { createAppViaApi, ok, publicJwk, registerViaApi, uniqueEmail } from './support';

/** The pages of the portal and an application filled with long values, for phone-widths.spec.ts. */

const LONG_EMAIL = 'alexandra.konstantinopoulou-schmidt@partner-integrations.example.com';
/** A tile's name as long as people write them: its list row, its dialogs and its page must still fit. */
const TILE_NAME = 'Main entrance, north wing, ground-floor reception desk';

export interface Seed {
  session: Record<string, string>;
  appId: string;
  lockId: string;
  webhookId: string;
  tileId: string;
  /** The invitation the share above emailed, opened in the Outbox. */
  outboxEmailId: string;
}

export async function seed(request: APIRequestContext): Promise<Seed> {
  const email = uniqueEmail('phone.widths');
  const auth = await registerViaApi(request, email, 'Dana Phone');
  const signIn = (await (
    await request.post('/api/auth/token', { data: { email, password: 'journey-pass' } })
  ).json()) as { authToken: string; refreshToken: string; privateKey: string; publicKey: string };
  const headers = { authorization: `Bearer ${auth.authToken}` };
  const appId = await createAppViaApi(request, auth.authToken, 'Phone Width Doors');
  const app = `/api/platform/application/${appId}`;
  await ok(request.post(app, { headers, data: { privacyPolicy: 'https://phone-width-doors.example.com/legal/privacy-policy', supportContact: 'mailto:support@phone-width-doors.example.com' } }));
  await ok(request.post(`${app}/auth/key`, { headers, data: publicJwk('phone-width-key-with-a-long-identifier-2026') }));
  await ok(request.post(`${app}/auth/issuer`, { headers, data: { url: `https://auth.${email.split('@')[0]!.replace(/\./g, '-')}.example.com/realms/production` } }));
  const locks = (await (await ok(request.get(`${app}/lock`, { headers }))).json()) as { id: string }[];
  const lockId = locks[0]!.id;
  await ok(request.put(`${app}/lock/${lockId}`, { headers, data: { settings: { unlockTime: 12 } } }));
  const day = 24 * 3600;
  const now = Math.floor(Date.now() / 1000);
  await ok(
    request.post(`${app}/lock/${lockId}/user`, {
      headers,
      data: {
        email: LONG_EMAIL,
        role: 'USER',
        start: now + day,
        end: now + 30 * day,
        timeWindow: { days: ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY'], start: '08:00', end: '18:00', timezone: 'Europe/Berlin' },
      },
    }),
  );
  await ok(request.post(`${app}/user`, { headers, data: { email: `second.${LONG_EMAIL}` } }));
  let outboxEmailId = '';
  await expect
    .poll(async () => {
      const sent = (await (await ok(request.get(`${app}/outbox`, { headers }))).json()) as { id: string; to: string }[];
      outboxEmailId = sent.find((e) => e.to === LONG_EMAIL)?.id ?? '';
      return outboxEmailId;
    })
    .not.toBe('');
  const hook = await ok(
    request.post(`${app}/webhook`, { headers, data: { url: 'https://93.184.215.14/a-rather-long-webhook-receiver-path/latchkey', events: ['application.updated'] } }),
  );
  const webhookId = ((await hook.json()) as { id: string }).id;
  // Tiles for the lock's Tiles list (one named at length, one unnamed) and the tile page, the lock in a site
  // with a long name on the Locks page.
  const tile = await ok(request.post(`${app}/lock/${lockId}/tile`, { headers }));
  const tileId = ((await tile.json()) as { tileId: string }).tileId;
  await ok(request.put(`${app}/lock/${lockId}/tile/${tileId}`, { headers, data: { name: TILE_NAME } }));
  await ok(request.post(`${app}/lock/${lockId}/tile`, { headers }));
  const site = await ok(request.post(`${app}/site`, { headers, data: { name: 'Headquarters Building North Wing Entrance' } }));
  await ok(request.put(`${app}/lock/${lockId}/site`, { headers, data: { siteId: ((await site.json()) as { id: string }).id } }));
  await ok(request.post(app, { headers, data: { companyName: 'Phone Width Doors Incorporated International' } }));
  return {
    appId,
    lockId,
    webhookId,
    tileId,
    outboxEmailId,
    session: {
      token: signIn.authToken,
      refreshToken: signIn.refreshToken,
      privateKey: signIn.privateKey,
      publicKey: signIn.publicKey,
      email,
      displayName: 'Dana Phone',
    },
  };
}

export const signedOutPages = ({ tileId }: Seed) => [
  '/login',
  '/register',
  '/accept-invite#email=new.person%40example.com&code=ABC123',
  '/forgot-password',
  '/reset-password#userId=00000000-0000-4000-8000-000000000000&token=not-a-real-token',
  '/verify-email#code=not-a-real-code',
  '/no-such-page/at-all',
  // A tile's page as a phone at the door opens it: the application's branding and the email sign-in.
  `/t/${tileId}`,
];

export const signedInPages = ({ appId, lockId, webhookId, tileId, outboxEmailId }: Seed) => [
  '/start',
  '/start/new',
  '/account',
  `/${appId}/overview`,
  `/${appId}/overview?tokenTester=open`,
  `/${appId}/getting-started/ios`,
  `/${appId}/getting-started/android`,
  `/${appId}/getting-started/javascript`,
  `/${appId}/getting-started/backend`,
  `/${appId}/getting-started/device`,
  `/${appId}/locks`,
  `/${appId}/locks/${lockId}`,
  `/${appId}/outbox`,
  `/${appId}/outbox?email=${outboxEmailId}`,
  `/${appId}/webhooks?webhook=${webhookId}`,
  `/${appId}/history`,
  `/${appId}/settings`,
  `/t/${tileId}`,
];

/**
 * The dialogs of pages above, each opened by its button (named in English or German): the tile's QR code
 * (with the loopback PUBLIC_URL notice the walk's service gives), naming a tile, adding a site.
 */
export const phoneDialogs = ({ appId, lockId }: Seed) => [
  { path: `/${appId}/locks/${lockId}`, button: new RegExp(`^(QR code of tile|QR-Code von Tür-Tag) ${TILE_NAME}$`), dialog: /^(Tile QR code|QR-Code des Tür-Tags)$/ },
  { path: `/${appId}/locks/${lockId}`, button: new RegExp(`^(Rename tile|Tür-Tag) ${TILE_NAME}( umbenennen)?$`), dialog: /^(Name this tile|Tür-Tag benennen)$/ },
  { path: `/${appId}/locks`, button: /^(Add site|Standort hinzufügen)$/, dialog: /^(Add site|Standort hinzufügen)$/ },
];

/** The page has drawn what it loads: no spinner left, and its fonts and transitions settled. */
export async function settled(page: Page) {
  await expect(page.locator('main, [role="dialog"], [role="region"]').first()).toBeVisible();
  await expect(page.getByRole('progressbar')).toHaveCount(0, { timeout: 20_000 });
  await page.evaluate(() => document.fonts.ready.then(() => undefined));
}

export async function expectNoWiderThanViewport(page: Page, label: string) {
  const { scrollWidth, innerWidth, wide, offscreen } = await page.evaluate(() => {
    const describe = (e: Element) =>
      `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}.${[...e.classList].slice(0, 2).join('.')} "${(e.getAttribute('aria-label') ?? e.textContent ?? '').slice(0, 40)}"`;
    const beyond = (e: Element) => {
      const box = e.getBoundingClientRect();
      return box.width > 0 && box.right > window.innerWidth + 0.5;
    };
    return {
      scrollWidth: document.documentElement.scrollWidth,
      innerWidth: window.innerWidth,
      // What sticks out, to say where in a failure.
      wide: [...document.querySelectorAll('body *')].filter((e) => beyond(e) && !e.closest('[aria-hidden="true"]')).slice(0, 4).map(describe),
      // A control of the page (not the section links, a row that scrolls) that a table pushed past the edge.
      offscreen: [...document.querySelectorAll('main :is(button, a[href], input, select, textarea), [role="dialog"] :is(button, a[href], input)')]
        // A tab list scrolls sideways by design (its arrows reach the rest).
        .filter((e) => beyond(e) && !e.closest('[role="tablist"]'))
        .slice(0, 4)
        .map(describe),
    };
  });
  expect.soft(scrollWidth, `${label} is ${scrollWidth} px wide at ${innerWidth} px: ${wide.join(' | ')}`).toBeLessThanOrEqual(innerWidth);
  expect.soft(offscreen, `${label}: controls past the right edge`).toEqual([]);
}
