import { contractEn } from './contract-en';
import { describe, expect, it } from 'vitest';
import { appPagesEn } from './app-pages-en';
import { en } from './en';

/** Every English text of the portal, with where it is. */
function texts(node: unknown, path = '', into: [string, string][] = []): [string, string][] {
  if (typeof node === 'string') into.push([path, node]);
  else if (node && typeof node === 'object') for (const [k, v] of Object.entries(node)) texts(v, path ? `${path}.${k}` : k, into);
  return into;
}
const english = texts({ ...en, ...appPagesEn, contract: contractEn });

describe('the English wording', () => {
  it('writes URL in capitals ("Company URLs", not "Company Urls")', () => {
    expect(english.filter(([, text]) => /\bUrls?\b/.test(text)).map(([path]) => path)).toEqual([]);
  });
});
