import { describe, expect, it } from 'vitest';
import { helmetHeaders } from './security-headers.js';

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
