import { accountSchema, applicationSchema, portalConfigSchema, type Account, type Application, type PortalConfig } from '@latchkey/contract';
import { render } from '@testing-library/react';
import type { ReactElement } from 'react';
import { createMemoryRouter, RouterProvider, type RouteObject } from 'react-router';
import { vi } from 'vitest';
import { AppProviders, createQueryClient } from '../app/providers';
import { SavedNoticeHost } from '../components/ui/saved-notice';
import { checkFakeAnswer } from './contract-bodies';

const b64url = (value: object) =>
  btoa(JSON.stringify(value)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

/** An unsigned JWT with the portal's claims; the browser never verifies signatures. */
export function makeJwt(claims: { exp: number; sub?: string; email?: string; sid?: string }): string {
  return `${b64url({ alg: 'none' })}.${b64url({ sub: 'user-1', email: 'me@example.com', sid: 's1', ...claims })}.sig`;
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);

export interface Call {
  method: string;
  url: string;
  body: unknown;
  headers: Record<string, string>;
}

/** JSON bodies as objects; anything else (a signed operation is application/jwt) as the raw text. */
function parseBody(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

type Responder = (call: Call) => Response | Promise<Response>;

/**
 * Stubs fetch at the network boundary and records every call; each test answers what it needs. Each JSON
 * answer on a route the contract describes is checked against it (test/contract-bodies.ts).
 */
export function stubFetch(responder: Responder): Call[] {
  const calls: Call[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
      const call: Call = {
        method: init?.method ?? 'GET',
        url: String(input),
        body: typeof init?.body === 'string' ? parseBody(init.body) : undefined,
        headers: (init?.headers ?? {}) as Record<string, string>,
      };
      calls.push(call);
      const response = await responder(call);
      await checkFakeAnswer(call.method, call.url, response);
      return response;
    }),
  );
  return calls;
}

export const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } });

export const noContent = () => new Response(null, { status: 204 });

export function renderRoute(
  element: ReactElement,
  { path = '/', initial = '/', extra = [] as RouteObject[], children = undefined as RouteObject[] | undefined } = {},
) {
  const router = createMemoryRouter([{ path, element, children }, ...extra], { initialEntries: [initial] });
  const queryClient = createQueryClient();
  const utils = render(
    <AppProviders queryClient={queryClient}>
      <RouterProvider router={router} />
      {/* As ProtectedLayout has it around the signed-in pages. */}
      <SavedNoticeHost />
    </AppProviders>,
  );
  return { ...utils, router, queryClient };
}

/** A complete application as the API returns it (parsed with the contract's schema below). */
export const sampleApplication: Application = {
  applicationId: 'app-1',
  name: 'Acme Doors',
  companyName: 'Acme Ltd',
  mailingAddress: '1 Road',
  owners: ['user-1', 'user-2'],
  logoUrl: null,
  privacyPolicy: 'https://acme.test/privacy',
  supportContact: 'mailto:help@acme.test',
  appLink: 'https://apps.test/acme',
  authDomains: [],
  corsDomains: [],
  authKeys: {},
  emailPreferences: {
    senderEmail: null,
    senderName: null,
    primaryColour: '#00283C',
    secondaryColour: '#45BDD1',
    onlySendEssentialEmails: true,
    callToAction: null,
  },
  lastUpdated: 0,
};
applicationSchema.parse(sampleApplication);

/** The portal's config and the signed-in account as the API returns them (parsed with the contract's schemas). */
export const sampleConfig: PortalConfig = portalConfigSchema.parse({
  privacyPolicyUrl: 'https://p.test',
  uploadBaseUrl: 'http://up.test',
  cdnBaseUrl: 'http://cdn.test',
  docsUrl: 'https://docs.test',
  platformAudience: 'https://portal.acme.test',
});
export const sampleAccount: Account = accountSchema.parse({ userId: 'user-1', email: 'me@example.com', displayName: 'Me', emailVerified: true, publicKey: null });

/** What every signed-in page may ask for besides its own routes: the config and the account. */
export function portalAnswer(call: Call): Response | undefined {
  if (call.method !== 'GET') return undefined;
  if (call.url === '/api/config') return json(sampleConfig);
  if (call.url === '/api/account') return json(sampleAccount);
  return undefined;
}
