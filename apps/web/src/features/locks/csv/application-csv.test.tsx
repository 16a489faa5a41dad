import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { storeSignIn } from '../../../lib/session';
import { json, makeJwt, nowSeconds, renderRoute, stubFetch } from '../../../test/helpers';
import { LocksPage } from '../list/locks-page';
import { eventStream, LOCKS, sampleLock } from '../test-fixtures';

const APP_CSV = '/api/platform/application/app-1/log.csv';

function setup(csv: () => Response) {
  storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600 }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
  const stream = eventStream();
  const calls = stubFetch((call) => {
    const path = call.url.split('?')[0];
    if (path === `${LOCKS}/events`) return stream.response;
    if (path === LOCKS) return json([sampleLock()]);
    if (path === APP_CSV) return csv();
    if (path === '/api/platform/application/app-1/site') return json([]);
    return json({ code: 404, message: 'Not found' }, 404);
  });
  renderRoute(<LocksPage />, { path: '/:appId/locks', initial: '/app-1/locks' });
  return { calls, u: userEvent.setup() };
}

afterEach(() => vi.restoreAllMocks());

describe('the application’s activity as CSV', () => {
  it('the Locks page downloads every lock’s activity with the session’s token, under the server’s file name', async () => {
    const saved: string[] = [];
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      saved.push(this.download);
    });
    vi.spyOn(URL, 'createObjectURL').mockReturnValue('blob:all');
    vi.spyOn(URL, 'revokeObjectURL').mockImplementation(() => undefined);
    const { calls, u } = setup(
      () => new Response('time\r\n', { headers: { 'Content-Type': 'text/csv', 'Content-Disposition': "attachment; filename*=UTF-8''acme%20activity.csv" } }),
    );
    await u.click(await screen.findByRole('button', { name: 'Download all activity (CSV)' }));
    await waitFor(() => expect(saved).toEqual(['acme activity.csv']));
    const csv = calls.find((c) => c.url === APP_CSV)!;
    expect(csv.headers.Authorization).toMatch(/^Bearer /);
    expect(csv.headers.Accept).toBe('text/csv');
  });

  it('a refused download says why and saves nothing', async () => {
    const click = vi.spyOn(HTMLAnchorElement.prototype, 'click');
    const { u } = setup(() => json({ code: 400, message: 'The end must be after the start' }, 400));
    await u.click(await screen.findByRole('button', { name: 'Download all activity (CSV)' }));
    expect(await screen.findByRole('alertdialog', { name: 'Failed' })).toHaveTextContent('The end must be after the start');
    expect(click).not.toHaveBeenCalled();
  });
});
