import { outboundErrors } from '@latchkey/contract';
import { describe, expect, it } from 'vitest';
import { setLanguage } from './index';
import { localText } from '../../lib/server-text';

describe('localText', () => {
  it('shows a contract text in the reader’s language', async () => {
    await setLanguage('de');
    expect(localText(outboundErrors.invalidUrl)).toBe('Die URL ist ungültig');
  });

  it('translates a contract text the server followed with a detail, and keeps the detail', async () => {
    await setLanguage('de');
    expect(localText(`${outboundErrors.notHttps}: example.com`)).toBe('Die URL muss mit https:// beginnen: example.com');
    // The known text holds a colon of its own.
    expect(localText(`${outboundErrors.privateAddress}: 10.0.0.5`)).toBe(
      'Die URL muss auf eine öffentliche Adresse zeigen: private, Loopback-, Link-Local- und Metadaten-Adressen werden nicht aufgerufen: 10.0.0.5',
    );
  });

  it('leaves an unknown text, and any text on an English page, as it came', async () => {
    await setLanguage('de');
    expect(localText('Something new: detail')).toBe('Something new: detail');
    await setLanguage('en');
    expect(localText(`${outboundErrors.notHttps}: example.com`)).toBe(`${outboundErrors.notHttps}: example.com`);
  });
});
