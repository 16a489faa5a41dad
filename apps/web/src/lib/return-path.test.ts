import { describe, expect, it } from 'vitest';
import { loginReturningTo, safeReturnPath } from './return-path';

describe('safeReturnPath', () => {
  it('takes a path of this portal, with its query and fragment', () => {
    expect(safeReturnPath('/app-1/locks/lock-1')).toBe('/app-1/locks/lock-1');
    expect(safeReturnPath('/app-1/history?kind=lock#top')).toBe('/app-1/history?kind=lock#top');
    expect(safeReturnPath('/app-1/overview?tokenTester=open')).toBe('/app-1/overview?tokenTester=open');
  });

  it.each([
    ['protocol-relative', '//evil.com'],
    ['protocol-relative with a path', '//evil.com/app-1/overview'],
    ['backslash', '/\\evil.com'],
    ['backslash later', '/app/..\\\\evil.com'],
    ['absolute http', 'https://evil.com/app-1'],
    ['absolute same-looking', 'http://localhost:3000/start'],
    ['javascript:', 'javascript:alert(1)'],
    ['JavaScript: in capitals', 'JaVaScRiPt:alert(1)'],
    ['a leading space', ' //evil.com'],
    ['data:', 'data:text/html,<script>alert(1)</script>'],
    ['a tab that URL parsing drops', '/\t/evil.com'],
    ['a line break', '/\n/evil.com'],
    ['relative', 'app-1/overview'],
    ['empty', ''],
    ['nothing', null],
    ['the login screen (a loop)', '/login?returnTo=/x'],
    ['registration', '/register'],
  ])('refuses %s', (_, value) => {
    expect(safeReturnPath(value)).toBeNull();
  });

  it('keeps an encoded slash as a path on this origin', () => {
    expect(safeReturnPath('/%2F%2Fevil.com')).toBe('/%2F%2Fevil.com');
  });
});

describe('loginReturningTo', () => {
  it('carries a deep link through /login', () => {
    expect(loginReturningTo('/app-1/locks/lock-1?from=2026-01-01')).toBe(
      '/login?returnTo=%2Fapp-1%2Flocks%2Flock-1%3Ffrom%3D2026-01-01',
    );
  });
  it('is plain /login where sign-in goes anyway, or for a path it would not take', () => {
    expect(loginReturningTo('/')).toBe('/login');
    expect(loginReturningTo('/start')).toBe('/login');
    expect(loginReturningTo('//evil.com')).toBe('/login');
  });
});
