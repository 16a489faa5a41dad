import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { createTestApp } from '../../test/helpers.js';
import { helmetHeaders, portalCspDirectives, registerSecurityHeaders } from './security-headers.js';

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

describe("the portal's CSP", () => {
  const cspOf = (headers: Record<string, unknown>) => String(headers['content-security-policy']);
  const directive = (csp: string, name: string) => csp.split(/;\s*/).find((d) => d.startsWith(`${name} `)) ?? '';

  it("lets the portal connect to its own origin only, with local logo storage", async () => {
    const t = await createTestApp();
    try {
      for (const url of ['/login', '/', '/some-app/overview']) {
        const csp = cspOf((await t.app.inject({ url })).headers);
        expect(directive(csp, 'connect-src'), url).toBe("connect-src 'self'");
        expect(directive(csp, 'script-src'), url).toBe("script-src 'self'");
      }
    } finally {
      await t.close();
    }
  });

  it('adds exactly the S3 upload origin when logos are uploaded to a bucket, and the CDN for images', () => {
    const directives = portalCspDirectives({
      publicUrl: 'https://portal.example.com',
      cdnBaseUrl: 'https://cdn.example.com/logos',
      uploadBaseUrl: 'https://my-logos.s3.eu-west-1.amazonaws.com',
    });
    expect(directives.connectSrc).toEqual(["'self'", 'https://my-logos.s3.eu-west-1.amazonaws.com']);
    expect(directives.imgSrc).toEqual(["'self'", 'data:', 'blob:', 'https://cdn.example.com']);
    // Same origin as the portal: nothing to add.
    expect(portalCspDirectives({ publicUrl: 'http://localhost:3000', cdnBaseUrl: 'http://localhost:3000/cdn', uploadBaseUrl: 'http://localhost:3000/api/uploads' }).connectSrc).toEqual(["'self'"]);
    const csp = helmetHeaders({ contentSecurityPolicy: { directives: directives } })['content-security-policy'];
    expect(csp).toContain("connect-src 'self' https://my-logos.s3.eu-west-1.amazonaws.com;");
    expect(csp).not.toMatch(/connect-src[^;]*https:(;| )/);
  });
});
