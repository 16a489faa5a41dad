import { describe, expect, it } from 'vitest';
import { directoryLookupSchema, isIpAddress, sdkErrors, updateLockPropertiesSchema } from './devices-sdk.js';

describe('the SDKs’ lock properties and look-ups', () => {
  it('takes IPv4 and IPv6 addresses, nothing else, as permitted addresses', () => {
    for (const ok of ['203.0.113.7', '0.0.0.0', '2001:db8::1', '::1', '::ffff:203.0.113.7']) expect(isIpAddress(ok), ok).toBe(true);
    for (const bad of ['203.0.113.256', '203.0.113', '10.0.0.0/8', 'example.com', '', ' 1.2.3.4x', '2001:db8::g']) expect(isIpAddress(bad), bad).toBe(false);
  });

  it('reads each PUT body the SDK sends, with or without kotlinx’s class discriminator', () => {
    const body = { type: 'com.doordeck.multiplatform.sdk.model.requests.UpdateLockSettingRequest', settings: { type: 'x.LockSettingsHiddenRequest', hidden: true } };
    expect(updateLockPropertiesSchema.parse(body)).toEqual({ settings: { hidden: true } });
    expect(updateLockPropertiesSchema.parse({ name: null })).toEqual({ name: null });
    expect(updateLockPropertiesSchema.safeParse({ settings: { permittedAddresses: ['not-an-ip'] } }).error?.issues[0]?.message).toBe(sdkErrors.notAnAddress);
  });

  it('takes exactly one kind of look-up, one value or up to 25', () => {
    expect(directoryLookupSchema.safeParse({ email: 'a@b.co' }).success).toBe(true);
    expect(directoryLookupSchema.safeParse({ email: null, telephone: null, localKey: null, foreignKey: 'sub-1', identity: null }).success).toBe(true);
    expect(directoryLookupSchema.safeParse({ foreignKey: Array.from({ length: 25 }, (_, i) => `s${i}`) }).success).toBe(true);
    expect(directoryLookupSchema.safeParse({ foreignKey: Array.from({ length: 26 }, (_, i) => `s${i}`) }).success).toBe(false);
    expect(directoryLookupSchema.safeParse({ email: 'a@b.co', localKey: 'x' }).error?.issues[0]?.message).toBe(sdkErrors.lookupOneKind);
    expect(directoryLookupSchema.safeParse({}).success).toBe(false);
    expect(directoryLookupSchema.safeParse({ localKey: 'a\u0000b' }).success).toBe(false);
  });
});
