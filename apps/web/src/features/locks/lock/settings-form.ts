import {
  latitudeSchema,
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

export interface SettingsFormValues {
  unlockTime: string;
  locationEnabled: boolean;
  latitude: string;
  longitude: string;
  radius: string;
  accuracy: LocationAccuracy;
}

const base = {
  unlockTime: typedNumber(unlockTimeSchema),
  locationEnabled: z.boolean(),
  accuracy: locationAccuracySchema,
};
const radiusSchema = locationRuleSchema.shape.radius;

/** With the rule off its fields are not checked (they may be empty); with it on, all of them are. */
export const settingsWithoutLocationSchema = z.object({
  ...base,
  latitude: z.string(),
  longitude: z.string(),
  radius: z.string(),
});
export const settingsWithLocationSchema = z.object({
  ...base,
  latitude: typedNumber(latitudeSchema),
  longitude: typedNumber(longitudeSchema),
  radius: typedNumber(radiusSchema),
});

export const DEFAULT_RADIUS_M = 50;

export function settingsValues(lock: Lock): SettingsFormValues {
  const location = lock.settings.usageRequirements.location;
  return {
    unlockTime: String(lock.settings.unlockTime),
    locationEnabled: location?.enabled ?? false,
    latitude: location ? String(location.latitude) : '',
    longitude: location ? String(location.longitude) : '',
    radius: String(location?.radius ?? DEFAULT_RADIUS_M),
    accuracy: location?.accuracy ?? 'HIGH',
  };
}

type Dirty = Partial<Record<keyof SettingsFormValues, boolean | undefined>>;

/**
 * Only what changed: the unlock time if edited, the location rule if any of its fields was. The lock's
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
  return { settings };
}
