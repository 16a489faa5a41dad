import {
  DEFAULT_OFFLINE_GRACE_S,
  latitudeSchema,
  lockMessages,
  MAX_OFFLINE_GRACE_S,
  MIN_OFFLINE_GRACE_S,
  locationAccuracySchema,
  locationRuleSchema,
  longitudeSchema,
  messages,
  unlockTimeSchema,
  type Lock,
  type LocationAccuracy,
  type UpdateLock,
} from '@latchkey/contract';
import * as z from 'zod/mini';

/** Number fields hold what was typed; the contract's number rules check it once it is read as a number. */
const typedNumber = (schema: z.ZodMiniType<number, number>) =>
  z.pipe(z.string().check(z.trim(), z.minLength(1, messages.required)), z.pipe(z.transform(Number), schema));

/** The offline graces offered by name (seconds); any other is given as a number with a unit. */
export const OFFLINE_GRACE_CHOICES = ['3600', '86400', '604800', '2592000'] as const;
export const GRACE_UNITS = { seconds: 1, minutes: 60, hours: 3600, days: 86_400 } as const;
export type GraceUnit = keyof typeof GRACE_UNITS;
export type GraceChoice = (typeof OFFLINE_GRACE_CHOICES)[number] | 'custom';

export interface SettingsFormValues {
  unlockTime: string;
  /** A named grace (its seconds), or `custom`: `graceAmount` in `graceUnit`. */
  offlineGrace: GraceChoice;
  graceAmount: string;
  graceUnit: GraceUnit;
  locationEnabled: boolean;
  latitude: string;
  longitude: string;
  radius: string;
  accuracy: LocationAccuracy;
}

/** The grace the form says, in seconds (NaN when the amount is not a number). */
export function graceSecondsOf(values: Pick<SettingsFormValues, 'offlineGrace' | 'graceAmount' | 'graceUnit'>): number {
  if (values.offlineGrace !== 'custom') return Number(values.offlineGrace);
  const amount = values.graceAmount.trim();
  return amount === '' ? Number.NaN : Number(amount) * GRACE_UNITS[values.graceUnit];
}

const graceInRange = (seconds: number) =>
  Number.isInteger(seconds) && seconds >= MIN_OFFLINE_GRACE_S && seconds <= MAX_OFFLINE_GRACE_S;

const base = {
  unlockTime: typedNumber(unlockTimeSchema),
  offlineGrace: z.enum([...OFFLINE_GRACE_CHOICES, 'custom']),
  graceAmount: z.string(),
  graceUnit: z.enum(Object.keys(GRACE_UNITS) as [GraceUnit, ...GraceUnit[]]),
  locationEnabled: z.boolean(),
  accuracy: locationAccuracySchema,
};
const radiusSchema = locationRuleSchema.shape.radius;

/** A grace given as a number with a unit must come to 1 minute – 30 days in whole seconds (said at the number). */
const graceCheck = z.refine<Pick<SettingsFormValues, 'offlineGrace' | 'graceAmount' | 'graceUnit'>>(
  (values) => graceInRange(graceSecondsOf(values)),
  { message: lockMessages.offlineGraceRange, path: ['graceAmount'] },
);

/** With the rule off its fields are not checked (they may be empty); with it on, all of them are. */
export const settingsWithoutLocationSchema = z
  .object({
    ...base,
    latitude: z.string(),
    longitude: z.string(),
    radius: z.string(),
  })
  .check(graceCheck);
export const settingsWithLocationSchema = z
  .object({
    ...base,
    latitude: typedNumber(latitudeSchema),
    longitude: typedNumber(longitudeSchema),
    radius: typedNumber(radiusSchema),
  })
  .check(graceCheck);

export const DEFAULT_RADIUS_M = 50;

/** A grace as the form shows it: a named one, or its number in the largest unit that divides it. */
export function graceValues(seconds: number): Pick<SettingsFormValues, 'offlineGrace' | 'graceAmount' | 'graceUnit'> {
  const named = OFFLINE_GRACE_CHOICES.find((choice) => Number(choice) === seconds);
  if (named) return { offlineGrace: named, graceAmount: '', graceUnit: 'hours' };
  const unit = (['days', 'hours', 'minutes', 'seconds'] as const).find((u) => seconds % GRACE_UNITS[u] === 0) ?? 'seconds';
  return { offlineGrace: 'custom', graceAmount: String(seconds / GRACE_UNITS[unit]), graceUnit: unit };
}

export function settingsValues(lock: Lock): SettingsFormValues {
  const location = lock.settings.usageRequirements.location;
  return {
    unlockTime: String(lock.settings.unlockTime),
    ...graceValues(lock.offlineGraceSeconds ?? DEFAULT_OFFLINE_GRACE_S),
    locationEnabled: location?.enabled ?? false,
    latitude: location ? String(location.latitude) : '',
    longitude: location ? String(location.longitude) : '',
    radius: String(location?.radius ?? DEFAULT_RADIUS_M),
    accuracy: location?.accuracy ?? 'HIGH',
  };
}

type Dirty = Partial<Record<keyof SettingsFormValues, boolean | undefined>>;

/**
 * Only what changed: the unlock time if edited, the offline grace if it differs, the location rule if any of its fields was. The lock's
 * time rules are sent back as they are, since usageRequirements is replaced as a whole. A rule switched
 * off keeps its place and radius for when it is switched on again.
 */
export function toUpdateLock(values: SettingsFormValues, dirty: Dirty, lock: Lock): UpdateLock {
  const settings: NonNullable<UpdateLock['settings']> = {};
  if (dirty.unlockTime) settings.unlockTime = Number(values.unlockTime);
  const locationDirty =
    dirty.locationEnabled || dirty.latitude || dirty.longitude || dirty.radius || dirty.accuracy;
  if (locationDirty) {
    const current = lock.settings.usageRequirements;
    const location = values.locationEnabled
      ? {
          latitude: Number(values.latitude),
          longitude: Number(values.longitude),
          radius: Number(values.radius),
          accuracy: values.accuracy,
          enabled: true,
        }
      : current.location
        ? { ...current.location, enabled: false }
        : null;
    settings.usageRequirements = { ...(current.time && { time: current.time }), location };
  }
  const graceDirty = dirty.offlineGrace || dirty.graceAmount || dirty.graceUnit;
  const grace = graceSecondsOf(values);
  return graceDirty && grace !== lock.offlineGraceSeconds ? { settings, offlineGraceSeconds: grace } : { settings };
}
