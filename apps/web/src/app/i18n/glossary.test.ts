import { describe, expect, it } from 'vitest';
import { appPagesDe } from './app-pages-de';
import { contractDe } from './contract-de';
import { de } from './de';

/** Every German text of the portal, with where it is. */
function texts(node: unknown, path = '', into: [string, string][] = []): [string, string][] {
  if (typeof node === 'string') into.push([path, node]);
  else if (node && typeof node === 'object') for (const [k, v] of Object.entries(node)) texts(v, path ? `${path}.${k}` : k, into);
  return into;
}
const german = texts({ ...de, ...appPagesDe, contract: contractDe });

/**
 * One German word for one thing. "Benutzer-Tokens" stood beside "Nutzer-Token", and the unlock
 * time was "Entriegelungsdauer" in History but "Öffnungsdauer" on the lock.
 */
describe('the German glossary', () => {
  it.each([
    ['Benutzer-Token', 'Nutzer-Token'],
    ['Entriegelungsdauer', 'Öffnungsdauer'],
    // Unlocking is öffnen everywhere, not entsperren here and entriegeln there.
    ['entsperr', 'öffnen'],
    ['entriegel', 'öffnen'],
    // An application's owner is its Eigentümer.
    ['Inhaber', 'Eigentümer'],
  ])('says %s nowhere (it is %s)', (avoid) => {
    expect(german.filter(([, text]) => text.toLowerCase().includes(avoid.toLowerCase())).map(([path]) => path)).toEqual([]);
  });

  it('writes a tile as Tür-Tag, not as the English "Tile"', () => {
    expect(german.filter(([, text]) => /\bTiles?\b/.test(text)).map(([path]) => path)).toEqual([]);
  });
});
