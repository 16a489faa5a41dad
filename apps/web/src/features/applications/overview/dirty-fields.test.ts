import { describe, expect, it } from 'vitest';
import { canSave, pickDirty, pickDirtyEmptyAsNull } from './dirty-fields';

describe('edit mode payloads', () => {
  it('sends only the dirty fields', () => {
    const values = { name: 'New', companyName: 'Same', mailingAddress: 'Same' };
    expect(pickDirty(values, { name: true })).toEqual({ name: 'New' });
    expect(pickDirty(values, {})).toEqual({});
  });

  it('treats a nested object as dirty when any member is', () => {
    const values = { callToAction: { headline: 'h', actionText: 'a', actionTarget: 't' }, senderName: 'x' };
    expect(pickDirty(values, { callToAction: { headline: true } })).toEqual({ callToAction: values.callToAction });
    expect(pickDirty(values, { callToAction: { headline: false } })).toEqual({});
  });

  it('Company URLs: sends an emptied field as null, and only dirty ones', () => {
    const values = { privacyPolicy: 'https://a.test/p', supportContact: 'mailto:a@a.test', appLink: '  ' };
    expect(pickDirtyEmptyAsNull(values, { appLink: true })).toEqual({ appLink: null });
    expect(pickDirtyEmptyAsNull(values, { privacyPolicy: true, appLink: false })).toEqual({ privacyPolicy: 'https://a.test/p' });
  });

  it('Save needs a change and a valid form', () => {
    expect(canSave(true, true)).toBe(true);
    expect(canSave(false, true)).toBe(false);
    expect(canSave(true, false)).toBe(false);
    expect(canSave(true, true, true)).toBe(false);
  });
});
