import { describe, expect, it } from 'vitest';
import { localEndpoints } from './local-http.js';

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
