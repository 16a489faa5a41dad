import { getI18n } from 'react-i18next';

/**
 * The contract's texts reach the portal as English strings: a schema's message, a server's `message`,
 * a sign-in failure. The English table holds them under `contract.*` (app/i18n/contract-en.ts); this finds a text there and shows the current language's version. A text it
 * does not know, or any text on an English page, is shown as it came.
 */
// The instance comes through react-i18next (set up in app/i18n): importing i18next here would make it a
// chunk of its own, shared by every page, and weigh on /login (bench/bundle-size.mjs).
let keyOfText: Map<string, string> | null = null;

function collect(node: unknown, path: string, into: Map<string, string>) {
  if (typeof node === 'string') {
    if (!into.has(node)) into.set(node, path);
    return;
  }
  if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) collect(v, `${path}.${k}`, into);
  }
}

function index(): Map<string, string> {
  if (!keyOfText?.size) {
    keyOfText = new Map();
    collect((getI18n().getResourceBundle('en', 'translation') as { contract?: unknown } | undefined)?.contract, 'contract', keyOfText);
  }
  return keyOfText;
}

export function localText(text: string): string {
  if (getI18n().language === 'en') return text;
  const key = index().get(text);
  if (key) return String(getI18n().t(key as never));
  // A known text with what it is about after a colon (the outbound guard's "The URL must start with
  // https://: example.com"): the text in the reader's language, the detail as it came. The last colon
  // first, since a known text may itself contain one.
  for (let at = text.lastIndexOf(': '); at > 0; at = text.lastIndexOf(': ', at - 1)) {
    const known = index().get(text.slice(0, at));
    if (known) return `${String(getI18n().t(known as never))}${text.slice(at)}`;
  }
  return text;
}
