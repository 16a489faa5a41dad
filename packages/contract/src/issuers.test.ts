import { describe, expect, it } from 'vitest';
import { addIssuerBodySchema, issuerBodySchema, normaliseIssuerUrl } from './index.js';

describe('issuer URLs in their RFC 3986 normal form', () => {
  it.each([
    ['https://ID.Example.COM', 'https://id.example.com'],
    ['HTTPS://id.example.com/', 'https://id.example.com'],
    ['https://id.example.com:443', 'https://id.example.com'],
    ['https://id.example.com:443/', 'https://id.example.com'],
    ['http://id.example.com:80/tenant', 'http://id.example.com/tenant'],
    ['https://id.example.com:8443/', 'https://id.example.com:8443'],
    ['https://id.example.com/tenant/', 'https://id.example.com/tenant/'],
    ['https://id.example.com/%7Euser/%2f', 'https://id.example.com/~user/%2F'],
    ['https://id.example.com/a/./b/../c', 'https://id.example.com/a/c'],
    ['https://bücher.example', 'https://xn--bcher-kva.example'],
    ['  https://id.example.com  ', 'https://id.example.com'],
  ])('%s → %s', (given, normal) => {
    expect(normaliseIssuerUrl(given)).toBe(normal);
    expect(normaliseIssuerUrl(normal)).toBe(normal);
  });

  it('is null for what is not an http(s) URL', () => {
    for (const v of ['', 'issuer', 'urn:example:issuer', 'ftp://id.example.com', 'https://', '\u0000']) expect(normaliseIssuerUrl(v)).toBeNull();
  });

  it('the add and remove bodies carry the normal form', () => {
    expect(addIssuerBodySchema.parse({ url: 'https://ID.example.com:443/' })).toEqual({ url: 'https://id.example.com' });
    expect(issuerBodySchema.parse({ url: 'HTTPS://id.example.com' })).toEqual({ url: 'https://id.example.com' });
  });
});
