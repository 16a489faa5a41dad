import type { Application } from '@latchkey/contract';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { Outlet } from 'react-router';
import { storeSignIn } from '../../../lib/session';
import { json, makeJwt, nowSeconds, renderRoute, stubFetch } from '../../../test/helpers';
import { GettingStartedIndex, GettingStartedPage } from './getting-started-page';

const config = { privacyPolicyUrl: 'https://p.test', uploadBaseUrl: 'http://up.test', cdnBaseUrl: 'http://cdn.test', docsUrl: 'https://docs.test', platformAudience: 'https://aud.test' };

const base: Application = {
  applicationId: '6f1c2a8e-0000-4000-8000-000000000001',
  name: 'Acme Doors',
  companyName: 'Acme Ltd',
  mailingAddress: '1 Road',
  owners: ['user-1'],
  logoUrl: null,
  privacyPolicy: null,
  supportContact: null,
  appLink: null,
  authDomains: ['https://auth.acme.test'],
  corsDomains: [],
  authKeys: { 'door-key': { kty: 'OKP', crv: 'Ed25519', x: 'abc', kid: 'door-key', use: 'sig' } },
  emailPreferences: { senderEmail: null, senderName: null, primaryColour: '#00283C', secondaryColour: '#45BDD1', onlySendEssentialEmails: true, callToAction: null },
  lastUpdated: 0,
};

/** The page as the shell renders it: the loaded application arrives as outlet context. */
function renderPage(app: Application, platform: string) {
  storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600 }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
  stubFetch((call) => (call.url === '/api/config' ? json(config) : json({ code: 404, message: 'Not found' }, 404)));
  return renderRoute(<Outlet context={app} />, {
    path: '/:appId',
    initial: `/${app.applicationId}/getting-started/${platform}`,
    children: [{ path: 'getting-started/*', element: <GettingStartedPage /> }],
  });
}

const code = (name: RegExp) => screen.getByRole('region', { name }).textContent ?? '';

describe('Getting Started', () => {
  it('copies the audience with its button', async () => {
    renderPage(base, 'javascript');
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Copy Audience (aud)' }));
    expect(await navigator.clipboard.readText()).toBe('https://aud.test');
    // Announced through the page's notice (the code blocks have status regions of their own).
    await waitFor(() => expect(screen.getAllByRole('status').some((s) => s.textContent?.includes('Copied'))).toBe(true));
  });

  it('fills the Android steps with this application’s id, issuer, audience and key', async () => {
    renderPage(base, 'android');
    expect(screen.getByText('Follow the steps below to integrate the product into your Android app.')).toBeInTheDocument();
    expect(await screen.findByText('https://aud.test')).toBeInTheDocument();
    expect(screen.getByText(base.applicationId)).toBeInTheDocument();
    expect(screen.getByText('https://auth.acme.test')).toBeInTheDocument();

    const sign = code(/Sign a user token on your backend: Kotlin code/);
    expect(sign).toContain('.issuer("https://auth.acme.test")');
    expect(sign).toContain('.audience("https://aud.test")');
    expect(sign).toContain('.keyID("door-key")');
    // An Ed25519 key: the signer and algorithm follow the registered key's type.
    expect(sign).toContain('JWSAlgorithm.EdDSA');
    expect(sign).toContain('Ed25519Signer(OctetKeyPair.parse(privateJwkJson))');

    const call = code(/Call the platform with the token: Kotlin code/);
    expect(call).toContain(`.url("${window.location.origin}/api/platform/auth")`);
    expect(call).toContain('"Bearer $userToken"');
    expect(call).toContain(`== "${base.applicationId}"`);

    expect(screen.getByRole('link', { name: 'Open the token tester' })).toHaveAttribute('href', `/${base.applicationId}/overview?tokenTester=open`);
    expect(screen.getByRole('link', { name: 'See partner users' })).toHaveAttribute('href', `/${base.applicationId}/settings`);
  });

  it('uses each platform’s library: JWTKit and URLSession on iOS, jose and fetch in JavaScript', async () => {
    const ec: Application = { ...base, authKeys: { k1: { kty: 'EC', crv: 'P-256', x: 'a', y: 'b', kid: 'k1', use: 'sig' } } };
    const { unmount } = renderPage(ec, 'ios');
    await screen.findByText('https://aud.test');
    expect(code(/Sign a user token on your backend: Swift code/)).toContain('await keys.add(ecdsa: try ES256PrivateKey(pem: privateKeyPEM), kid: "k1")');
    expect(code(/Sign a user token on your backend: Swift code/)).toContain('IssuerClaim(value: "https://auth.acme.test")');
    expect(code(/Call the platform with the token: Swift code/)).toContain('request.setValue("Bearer \\(userToken)", forHTTPHeaderField: "Authorization")');
    unmount();

    renderPage(ec, 'javascript');
    await screen.findByText('https://aud.test');
    const sign = code(/Sign a user token on your backend: JavaScript code/);
    expect(sign).toContain(".setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'JWT' })");
    expect(sign).toContain(".setAudience('https://aud.test')");
    expect(code(/Call the platform with the token: JavaScript code/)).toContain('Authorization: `Bearer ${userToken}`');
  });

  it('redirects /getting-started to the tab last looked at (iOS here)', async () => {
    localStorage.setItem('latchkey.gettingStartedTab', 'ios');
    storeSignIn({ authToken: makeJwt({ exp: nowSeconds() + 600 }), refreshToken: 'r', privateKey: 'a', publicKey: 'b' });
    stubFetch(() => json(config));
    const { router } = renderRoute(<Outlet context={base} />, {
      path: '/:appId',
      initial: `/${base.applicationId}/getting-started`,
      children: [
        {
          path: 'getting-started',
          element: <GettingStartedPage />,
          children: [{ index: true, element: <GettingStartedIndex /> }, { path: 'ios', element: null }],
        },
      ],
    });
    await screen.findByText('Follow the steps below to integrate the product into your iOS app.');
    expect(router.state.location.pathname).toBe(`/${base.applicationId}/getting-started/ios`);
  });

  describe('a co-owner’s hostile key id and alg stay string literals', () => {
    const kid = "k1\nrequire('child_process').execSync('touch /tmp/pwned') // \u2028$HOME ${x} \\(y) \"'\0";
    const alg = 'ES256)\nRuntime.getRuntime().exec("touch /tmp/pwned") //';
    const hostile: Application = {
      ...base,
      authDomains: ['https://auth.acme.test/\n$(id)'],
      authKeys: { [kid]: { kty: 'EC', crv: 'P-256', x: 'a', y: 'b', kid, alg, use: 'sig' } },
    };
    /** The planted statements must never start a line of code (or follow a comment marker). */
    const noPlantedLine = (text: string) => {
      for (const line of text.split(/\r\n|[\n\r\u2028\u2029]/)) {
        expect(line.trimStart(), line).not.toMatch(/^(require|Runtime)/);
        const comment = line.indexOf('//');
        if (line.trimStart().startsWith('//')) expect(line.slice(comment), 'a comment carries no value').not.toMatch(/k1|touch|Runtime|require/);
      }
      expect(text).not.toMatch(/[\u2028\u2029\0]/);
    };

    it('JavaScript: kid and alg as single-quoted literals that evaluate to the values', async () => {
      renderPage(hostile, 'javascript');
      await screen.findByText('https://aud.test');
      const sign = code(/Sign a user token on your backend: JavaScript code/);
      noPlantedLine(sign);
      const header = /\.setProtectedHeader\(\{ alg: ('(?:[^'\\]|\\.)*'), kid: ('(?:[^'\\]|\\.)*'), typ: 'JWT' \}\)/.exec(sign);
      expect(header).not.toBeNull();
      expect(new Function(`return [${header![1]}, ${header![2]}]`)()).toEqual([alg, kid]);
      noPlantedLine(code(/Call the platform with the token: JavaScript code/));
    });

    it('Kotlin: the alg goes through JWSAlgorithm.parse, never into code', async () => {
      renderPage(hostile, 'android');
      await screen.findByText('https://aud.test');
      const sign = code(/Sign a user token on your backend: Kotlin code/);
      noPlantedLine(sign);
      expect(sign).toContain('JWSHeader.Builder(JWSAlgorithm.parse("ES256)\\nRuntime.getRuntime().exec(\\"touch /tmp/pwned\\") //"))');
      expect(sign).toContain('.keyID("k1\\nrequire(\'child_process\').execSync(\'touch /tmp/pwned\') // \\u2028\\$HOME \\${x} \\\\(y) \\"\'\\u0000")');
    });

    it('Swift: an unknown alg is no code at all, the kid a literal', async () => {
      renderPage(hostile, 'ios');
      await screen.findByText('https://aud.test');
      const sign = code(/Sign a user token on your backend: Swift code/);
      noPlantedLine(sign);
      expect(sign).not.toContain('Runtime');
      expect(sign).toContain("// JWTKit cannot sign with this key's algorithm");
      expect(sign).toContain('try await keys.sign(claims, kid: "k1\\nrequire(\'child_process\').execSync(\'touch /tmp/pwned\') // \\u{2028}$HOME ${x} \\\\(y) \\"\'\\0")');
      expect(sign).toContain('IssuerClaim(value: "https://auth.acme.test/\\n$(id)")');
    });
  });

  it('without an issuer or key, says to add them on the Overview and uses placeholders', async () => {
    renderPage({ ...base, authDomains: [], authKeys: {} }, 'javascript');
    await screen.findByText('https://aud.test');
    const issuer = screen.getByText(/No Auth Domain registered yet/);
    expect(within(issuer.closest('dd')!).getByRole('link', { name: 'Go to the Overview' })).toHaveAttribute('href', `/${base.applicationId}/overview`);
    expect(screen.getByText(/No Auth Key registered yet/)).toBeInTheDocument();
    const sign = code(/Sign a user token on your backend: JavaScript code/);
    expect(sign).toContain(".setIssuer('https://auth.your-company.com')");
    expect(sign).toContain("kid: 'your-key-id'");
  });
});
