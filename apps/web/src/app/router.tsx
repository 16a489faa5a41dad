import { createBrowserRouter, Navigate, type RouteObject } from 'react-router';
import { alwaysRevalidate, protectedLoader } from './guard';
import { loadAppPageTexts } from './i18n';
import { SplashLayout } from './layouts/splash-layout';
import { RouteError } from './layouts/route-error';
import { paths } from '../lib/paths';

// Each screen is its own chunk (react-router's route `lazy`, which loads the module before rendering
// and so avoids a Suspense waterfall); /login pulls in only the splash layout and the login form.
// Routes that read the API through TanStack Query sit under QueryLayout, loaded in parallel with them.
const queryLayout = () => import('./layouts/query-layout').then((m) => ({ Component: m.QueryLayout }));
// Until the first screen's code is in, nothing is drawn (as without one); naming it keeps React Router
// from warning on every page load that none was provided.
const NothingYet = () => null;
// The signed-in pages' strings (i18n/app-pages-en.ts) load with the layout around all of them, in parallel
// with its code, so /login and the other splash pages carry none of them.
const protectedLayout = () =>
  Promise.all([
    import('./layouts/protected-layout').then((m) => ({ Component: m.ProtectedLayout })),
    loadAppPageTexts(),
  ]).then(([route]) => route);

export const routes: RouteObject[] = [
  {
    element: <SplashLayout />,
    HydrateFallback: NothingYet,
    errorElement: <RouteError />,
    children: [
      { path: paths.splash, element: <Navigate to={paths.login} replace /> },
      {
        path: paths.login,
        lazy: () => import('../features/auth/login-page').then((m) => ({ Component: m.LoginPage })),
      },
      {
        lazy: queryLayout,
        children: [
          {
            path: paths.register,
            // With the signed-in pages' strings: the password strength hint's words are among them, and
            // /start, where a new account goes next, needs them anyway.
            lazy: () =>
              Promise.all([
                import('../features/auth/register-page').then((m) => ({ Component: m.RegisterPage })),
                loadAppPageTexts(),
              ]).then(([route]) => route),
          },
        ],
      },
      {
        path: paths.forgotPassword,
        lazy: () => import('../features/auth/forgot-password-page').then((m) => ({ Component: m.ForgotPasswordPage })),
      },
      {
        path: paths.resetPassword,
        // With the signed-in pages' strings: the password strength hint's words are among them.
        lazy: () =>
          Promise.all([
            import('../features/auth/reset-password-page').then((m) => ({ Component: m.ResetPasswordPage })),
            loadAppPageTexts(),
          ]).then(([route]) => route),
      },
      {
        path: paths.verifyEmail,
        lazy: () => import('../features/auth/verify-email-page').then((m) => ({ Component: m.VerifyEmailPage })),
      },
      {
        path: paths.acceptInvite,
        lazy: () =>
          import('../features/auth/accept-invite-page').then((m) => ({ Component: m.AcceptInvitePage })),
      },
    ],
  },
  {
    lazy: queryLayout,
    HydrateFallback: NothingYet,
    errorElement: <RouteError />,
    children: [
      // A tile's page needs no portal session: a person a lock is shared with signs in there by email.
      {
        path: 't/:tileId',
        lazy: () =>
          Promise.all([
            import('../features/locks/tiles/tile-page').then((m) => ({ Component: m.TilePage })),
            loadAppPageTexts(),
          ]).then(([route]) => route),
      },
      {
        path: paths.home,
        loader: protectedLoader,
        shouldRevalidate: alwaysRevalidate,
        errorElement: <RouteError />,
        lazy: protectedLayout,
        children: [
          { index: true, element: <Navigate to={paths.start} replace /> },
          {
            path: 'account',
            lazy: () => import('../features/auth/account-page').then((m) => ({ Component: m.AccountPage })),
          },
          {
            path: 'start',
            lazy: () =>
              import('../features/applications/start/start-page').then((m) => ({ Component: m.StartPage })),
            children: [
              {
                path: 'new',
                lazy: () =>
                  import('../features/applications/wizard/add-application-wizard').then((m) => ({
                    Component: m.AddApplicationWizard,
                  })),
              },
            ],
          },
          {
            path: ':appId',
            lazy: () => import('./layouts/app-shell-layout').then((m) => ({ Component: m.AppShellLayout })),
            children: [
              { index: true, element: <Navigate to="overview" replace /> },
              {
                path: 'overview',
                lazy: () =>
                  import('../features/applications/overview/overview-page').then((m) => ({
                    Component: m.OverviewPage,
                  })),
              },
              {
                path: 'getting-started',
                lazy: () =>
                  import('../features/applications/getting-started/getting-started-page').then((m) => ({
                    Component: m.GettingStartedPage,
                  })),
                children: [
                  {
                    index: true,
                    lazy: () =>
                      import('../features/applications/getting-started/getting-started-page').then((m) => ({
                        Component: m.GettingStartedIndex,
                      })),
                  },
                  { path: 'ios', element: null },
                  { path: 'android', element: null },
                  { path: 'javascript', element: null },
                  {
                    path: 'backend',
                    lazy: () =>
                      import('../features/locks/guide/unlock-guide').then((m) => ({
                        Component: m.UnlockGuide,
                      })),
                  },
                  {
                    path: 'device',
                    lazy: () =>
                      import('../features/locks/guide/device-guide').then((m) => ({ Component: m.DeviceGuide })),
                  },
                ],
              },
              {
                path: 'locks',
                lazy: () =>
                  import('../features/locks/list/locks-page').then((m) => ({ Component: m.LocksPage })),
              },
              {
                path: 'locks/:lockId',
                lazy: () =>
                  import('../features/locks/lock/lock-page').then((m) => ({ Component: m.LockPage })),
              },
              {
                path: 'outbox',
                lazy: () =>
                  import('../features/outbox/outbox-page').then((m) => ({ Component: m.OutboxPage })),
              },
              {
                path: 'webhooks',
                lazy: () =>
                  import('../features/webhooks/webhooks-page').then((m) => ({ Component: m.WebhooksPage })),
              },
              {
                path: 'history',
                lazy: () =>
                  import('../features/history/history-page').then((m) => ({ Component: m.HistoryPage })),
              },
              {
                path: 'settings',
                lazy: () =>
                  import('../features/settings/settings-page').then((m) => ({ Component: m.SettingsPage })),
              },
            ],
          },
        ],
      },
    ],
  },
  {
    path: '*',
    HydrateFallback: NothingYet,
    lazy: () => import('./layouts/not-found-page').then((m) => ({ Component: m.NotFoundPage })),
  },
];

export function createRouter() {
  return createBrowserRouter(routes);
}
