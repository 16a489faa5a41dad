import { beforeEach, describe, expect, it, vi } from 'vitest';

describe('session storage', () => {
  // Each test loads the session module afresh, as a page loading the portal does.
  beforeEach(() => vi.resetModules());

  it('keeps no private key from the sign-in answer', async () => {
    const { getSession, storeSignIn } = await import('./session');
    storeSignIn({ authToken: 'a.b.c', refreshToken: 'r', privateKey: 'MC4CAQAwBQYDK2VwBCIEI-secret', publicKey: 'pub' });
    expect(JSON.stringify({ ...localStorage })).not.toContain('secret');
    expect(getSession()).not.toHaveProperty('privateKey');
  });

  it('removes the key pair an earlier portal stored, once the portal loads', async () => {
    localStorage.setItem('privateKey', 'MC4CAQAwBQYDK2VwBCIEI-secret');
    localStorage.setItem('publicKey', 'pub');
    localStorage.setItem('token', 'kept');
    await import('./session');
    expect(localStorage.getItem('privateKey')).toBeNull();
    expect(localStorage.getItem('publicKey')).toBeNull();
    expect(localStorage.getItem('token')).toBe('kept');
  });
});
