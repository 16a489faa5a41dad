import { describe, expect, it } from 'vitest';
import { i18n, setLanguage } from '../../app/i18n';
import { addRecoveryTexts } from './recovery-texts';

describe('the recovery pages’ texts', () => {
  it('once added on an English page, switching to German still loads the whole German table', async () => {
    addRecoveryTexts();
    await setLanguage('de');
    expect(i18n.t('recovery.verifyTitle')).toBe('E-Mail-Adresse bestätigen');
    expect(i18n.t('common.cancel')).toBe('Abbrechen');
  });
});
