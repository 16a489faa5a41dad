import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { helmetHeaders, registerSecurityHeaders } from './security-headers.js';

describe('helmetHeaders', () => {
  it("records helmet's headers for the given policy", () => {
    const headers = helmetHeaders({ contentSecurityPolicy: { directives: { scriptSrc: ["'self'"], frameAncestors: ["'none'"] } } });
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers['strict-transport-security']).toMatch(/^max-age=\d+/);
    expect(headers['content-security-policy']).toContain("script-src 'self'");
    expect(headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(headers).not.toHaveProperty('x-powered-by');
  });

  it('leaves out what the options turn off, and refuses options helmet refuses', () => {
    expect(helmetHeaders({ contentSecurityPolicy: false })).not.toHaveProperty('content-security-policy');
    expect(() => helmetHeaders({ contentSecurityPolicy: { directives: { scriptSrc: ['self'] } } })).toThrow();
  });
});

describe('registerSecurityHeaders', () => {
  it("gives documents helmet's headers and the API's JSON answers the API set; a handler's own header wins", async () => {
    const app = Fastify();
    registerSecurityHeaders(app, { apiPrefix: '/api', contentSecurityPolicy: { directives: { scriptSrc: ["'self'"] } } });
    for (const url of ['/page', '/apix', '/api/docs', '/api/docs/json', '/api/docsx', '/api/thing', '/api']) app.get(url, async () => 'ok');
    app.get('/api/own', async (_request, reply) => reply.header('content-security-policy', "default-src 'self'").send('ok'));
    await app.ready();
    const headersOf = async (url: string) => (await app.inject({ url })).headers;

    for (const url of ['/page', '/api/docs', '/api/docs/json', '/api/docs?x=1', '/apix']) {
      const h = await headersOf(url);
      expect(h['content-security-policy'], url).toContain("script-src 'self'");
      expect(h['cross-origin-opener-policy'], url).toBe('same-origin');
      expect(h['cache-control'], url).toBeUndefined();
    }
    for (const url of ['/api/thing', '/api/docsx', '/api/thing?x=1', '/api']) {
      const h = await headersOf(url);
      expect(h['content-security-policy'], url).toBe("default-src 'none'; frame-ancestors 'none'");
      expect(h['x-frame-options'], url).toBe('DENY');
      expect(h['x-content-type-options'], url).toBe('nosniff');
      expect(h['strict-transport-security'], url).toMatch(/^max-age=\d+/);
      expect(h['cross-origin-resource-policy'], url).toBe('same-origin');
      expect(h['cache-control'], url).toBe('no-store');
      expect(h['cross-origin-opener-policy'], url).toBeUndefined();
      expect(h['x-dns-prefetch-control'], url).toBeUndefined();
    }
    expect((await headersOf('/api/own'))['content-security-policy']).toBe("default-src 'self'");
    await app.close();
  });
});
