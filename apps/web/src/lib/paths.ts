/** Query parameter that opens the token tester, so the dialog has a URL of its own. */
export const TOKEN_TESTER_PARAM = 'tokenTester';
/** Query parameter of the wizard naming the application whose setup it resumes. */
export const RESUME_PARAM = 'resume';

/** Query parameter of the Outbox that selects the email shown, so a link can open one. */
export const OUTBOX_EMAIL_PARAM = 'email';

/** Every route of the portal in one place; components link through these, never with string literals. */
export const paths = {
  splash: '/splash',
  login: '/login',
  register: '/register',
  acceptInvite: '/accept-invite',
  forgotPassword: '/forgot-password',
  resetPassword: '/reset-password',
  verifyEmail: '/verify-email',
  account: '/account',
  home: '/',
  start: '/start',
  addApplication: '/start/new',
  /** The wizard again, on an application whose setup was left unfinished. */
  resumeApplication: (appId: string) => `/start/new?${RESUME_PARAM}=${encodeURIComponent(appId)}`,
  app: (appId: string) => `/${encodeURIComponent(appId)}`,
  overview: (appId: string) => `/${encodeURIComponent(appId)}/overview`,
  gettingStarted: (appId: string) => `/${encodeURIComponent(appId)}/getting-started`,
  gettingStartedPlatform: (appId: string, platform: GettingStartedTab) =>
    `/${encodeURIComponent(appId)}/getting-started/${platform}`,
  appLocks: (appId: string) => `/${encodeURIComponent(appId)}/locks`,
  lock: (appId: string, lockId: string) => `/${encodeURIComponent(appId)}/locks/${encodeURIComponent(lockId)}`,
  outbox: (appId: string) => `/${encodeURIComponent(appId)}/outbox`,
  outboxEmail: (appId: string, emailId: string) => `/${encodeURIComponent(appId)}/outbox?${OUTBOX_EMAIL_PARAM}=${encodeURIComponent(emailId)}`,
  settings: (appId: string) => `/${encodeURIComponent(appId)}/settings`,
  history: (appId: string) => `/${encodeURIComponent(appId)}/history`,
  webhooks: (appId: string) => `/${encodeURIComponent(appId)}/webhooks`,
  /** A tile's page: what a phone opens from the tile's QR code. */
  tile: (tileId: string) => `/t/${encodeURIComponent(tileId)}`,
  /** The overview with the Authentication card's token tester open (Getting Started links here). */
  tokenTester: (appId: string) => `/${encodeURIComponent(appId)}/overview?${TOKEN_TESTER_PARAM}=open`,
} as const;

export const PLATFORMS = ['ios', 'android', 'javascript'] as const;
export type Platform = (typeof PLATFORMS)[number];
/**
 * Getting Started's tabs: running an unlock from the developer's backend — first (the path to a
 * first unlock, in view on a phone and where a first visit lands) — then connecting a real lock (a
 * device), and one per app platform.
 */
export const GETTING_STARTED_TABS = ['backend', 'device', ...PLATFORMS] as const;
export type GettingStartedTab = (typeof GETTING_STARTED_TABS)[number];
