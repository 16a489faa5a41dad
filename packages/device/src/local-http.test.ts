import { describe, expect, it } from 'vitest';
import type { LockController } from './controller.js';
import { localEndpoints, startLocalHttp } from './local-http.js';

describe('the local endpoint in a browser', () => {
  it('answers a preflight for the SDK’s POST from any origin, its private-network question included, without deciding anything', async () => {
    const controller = { handle: () => Promise.reject(new Error('a preflight decides nothing')) } as unknown as LockController;
    const { server, port } = await startLocalHttp({ controller, port: 0, host: '127.0.0.1' });
    try {
      const preflight = (extra: Record<string, string> = {}) =>
        fetch(`http://127.0.0.1:${port}/execute`, {
          method: 'OPTIONS',
          headers: { origin: 'https://doors.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,authorization', ...extra },
        });
      const plain = await preflight();
      expect(plain.status).toBe(204);
      expect(plain.headers.get('access-control-allow-origin')).toBe('*');
      expect(plain.headers.get('access-control-allow-methods')).toContain('POST');
      expect(plain.headers.get('access-control-allow-headers')?.split(/,\s*/)).toEqual(expect.arrayContaining(['content-type', 'authorization']));
      expect(plain.headers.get('access-control-allow-private-network')).toBeNull();
      const asked = await preflight({ 'access-control-request-private-network': 'true' });
      expect(asked.status).toBe(204);
      expect(asked.headers.get('access-control-allow-private-network')).toBe('true');
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('localEndpoints', () => {
  it('announces the address the endpoint listens on, every LAN address for all of them, and nothing for loopback', () => {
    expect(localEndpoints(8080, '192.168.1.20')).toEqual(['http://192.168.1.20:8080/execute']);
    expect(localEndpoints(8080, '127.0.0.1')).toEqual([]);
    const all = localEndpoints(8080);
    expect(all.length).toBeLessThanOrEqual(4);
    for (const url of all) expect(url).toMatch(/^http:\/\/(\d+\.){3}\d+:8080\/execute$/);
    expect(all.some((url) => url.includes('127.0.0.1'))).toBe(false);
  });
});
