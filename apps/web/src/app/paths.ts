/** Query parameter that opens the token tester, so the dialog has a URL of its own. */
export const TOKEN_TESTER_PARAM = 'tokenTester';

/** Every route of spec §2 in one place; components link through these, never with string literals. */
export const paths = {
  splash: '/splash',
  login: '/login',
  register: '/register',
  acceptInvite: '/accept-invite',
  home: '/',
  start: '/start',
  addApplication: '/start/new',
  /** Spec: the 'locks' route is the target after a token refresh; this product has no locks screen. */
  locks: '/start',
  app: (appId: string) => `/${encodeURIComponent(appId)}`,
  overview: (appId: string) => `/${encodeURIComponent(appId)}/overview`,
  gettingStarted: (appId: string) => `/${encodeURIComponent(appId)}/getting-started`,
  gettingStartedPlatform: (appId: string, platform: Platform) =>
    `/${encodeURIComponent(appId)}/getting-started/${platform}`,
  settings: (appId: string) => `/${encodeURIComponent(appId)}/settings`,
  /** The overview with the Authentication card's token tester open (Getting Started links here). */
  tokenTester: (appId: string) => `/${encodeURIComponent(appId)}/overview?${TOKEN_TESTER_PARAM}=open`,
} as const;

export const PLATFORMS = ['ios', 'android', 'javascript'] as const;
export type Platform = (typeof PLATFORMS)[number];
