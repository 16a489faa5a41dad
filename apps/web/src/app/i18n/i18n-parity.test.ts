import { describe, expect, it } from 'vitest';
import { contractDe } from './contract-de';
import { contractEn } from './contract-en';
import { de } from './de';
import { en } from './en';
import { appPagesDe } from './app-pages-de';
import { appPagesEn } from './app-pages-en';

/** Every leaf of a table as `path → text`, lists included (`wizard.steps.0`). */
function leaves(node: unknown, path = '', into = new Map<string, string>()): Map<string, string> {
  if (typeof node === 'string') into.set(path, node);
  else if (node && typeof node === 'object')
    for (const [k, v] of Object.entries(node)) leaves(v, path ? `${path}.${k}` : k, into);
  return into;
}

const placeholders = (text: string) => [...text.matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]).sort();

// Each language's whole table: the portal's strings and the contract's texts.
const languages = { de: { ...de, ...appPagesDe, contract: contractDe } };

describe.each(Object.entries(languages))('the %s table', (_name, table) => {
  const english = leaves({ ...en, ...appPagesEn, contract: contractEn });
  const other = leaves(table);

  it('has every English key', () => {
    expect([...english.keys()].filter((k) => !other.has(k))).toEqual([]);
  });

  it('has no key English lacks', () => {
    expect([...other.keys()].filter((k) => !english.has(k))).toEqual([]);
  });

  it('leaves no text empty and keeps every {{placeholder}}', () => {
    for (const [key, text] of other) {
      expect(text.trim(), key).not.toBe('');
      expect(placeholders(text), key).toEqual(placeholders(english.get(key) ?? ''));
    }
  });
});
