import * as z from 'zod/mini';
import { idParam } from './text.js';

/** The owner's device routes: POST/GET/DELETE /platform/application/{id}/lock/{lockId}/device. */

export const deviceCreatedSchema = z.object({
  deviceId: z.string(),
  /** Shown once; stored hashed. */
  provisioningCode: z.string(),
  /** Epoch seconds. */
  expiresAt: z.number(),
});
export type DeviceCreated = z.infer<typeof deviceCreatedSchema>;

export const deviceStatusSchema = z.object({
  deviceId: z.string(),
  /** false until the device has used its provisioning code. */
  provisioned: z.boolean(),
  /** Presence: the device's retained `online`, until its Last Will says `offline`. */
  connected: z.boolean(),
  /** Epoch seconds of the last message from the device; null before the first. */
  lastSeen: z.nullable(z.number()),
  firmware: z.nullable(z.string()),
  /** The device's last reported state; null before its first report. */
  locked: z.nullable(z.boolean()),
  /** While a code is waiting to be used: when it expires (epoch seconds). */
  codeExpiresAt: z.nullable(z.number()),
});
export type DeviceStatus = z.infer<typeof deviceStatusSchema>;

export const deviceParamsSchema = z.object({ applicationId: idParam(), lockId: idParam() });
