import { render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { expect, it } from 'vitest';
import { createMemoryRouter, Link, RouterProvider } from 'react-router';
import { storeSignIn } from '../lib/session';
import { json, makeJwt, nowSeconds, portalAnswer, sampleApplication, stubFetch } from '../test/helpers';
import { alwaysRevalidate, protectedLoader } from './guard';

function EditPage() {
  return (
    <>
      <label>
        Company name <input name="company" />
      </label>
      <Link to="?tokenTester=open">Test a user token</Link>
    </>
  );
}

/**
 * After ~15 minutes idle the access token has expired; the next navigation refreshes it. The
 * page must stay — same URL, and what was typed but not saved still there — instead of going to /start.
 */
it('a token refreshed on an in-page navigation keeps the page and its unsaved input', async () => {
  const calls = stubFetch(
    (call) =>
      portalAnswer(call) ??
      (call.url.endsWith('/auth/token/refresh') ? json({ authToken: makeJwt({ exp: nowSeconds() + 900 }), refreshToken: 'r2' }) : json(sampleApplication)),
  );
  storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600 }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
  const router = createMemoryRouter(
    [
      { path: '/:appId/overview', loader: protectedLoader, shouldRevalidate: alwaysRevalidate, Component: EditPage },
      { path: '/start', element: <p>My Applications</p> },
      { path: '/login', element: <p>Login</p> },
    ],
    { initialEntries: ['/app-1/overview'] },
  );
  render(<RouterProvider router={router} />);
  const u = userEvent.setup();
  const field = await screen.findByRole('textbox', { name: 'Company name' });
  await u.type(field, 'Unsaved Ltd');

  // Idle past the token's lifetime.
  storeSignIn({ authToken: makeJwt({ exp: nowSeconds() - 5 }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
  await u.click(screen.getByRole('link', { name: 'Test a user token' }));
  await waitFor(() => expect(router.state.location.search).toBe('?tokenTester=open'));
  await waitFor(() => expect(router.state.navigation.state).toBe('idle'));

  expect(calls.filter((c) => c.url === '/api/auth/token/refresh')).toHaveLength(1);
  expect(router.state.location.pathname).toBe('/app-1/overview');
  expect(screen.queryByText('My Applications')).toBeNull();
  expect(screen.getByRole('textbox', { name: 'Company name' })).toHaveValue('Unsaved Ltd');
});
