import { lockDeviceSummarySchema, type DeviceCreated, type DeviceStatus } from '@latchkey/contract';
import * as z from 'zod/mini';

/*
 * The owner's device routes answer with the contract's deviceCreated and deviceStatus shapes. The contract
 * builds those in the module that also builds the device's provisioning and MQTT payloads, with zod's full
 * build: importing them at run time puts all of that into the chunk every page loads, /login included
 * (bench/bundle-size.mjs). Until those are modules of their own, the portal parses with the same shapes
 * built here from the contract's lock-device summary; schemas.test.ts holds them equal to the contract's.
 */

export const deviceStatusSchema: z.ZodMiniType<DeviceStatus> = z.extend(lockDeviceSummarySchema, {
  locked: z.nullable(z.boolean()),
  codeExpiresAt: z.nullable(z.number()),
});

export const deviceCreatedSchema: z.ZodMiniType<DeviceCreated> = z.object({
  deviceId: z.string(),
  provisioningCode: z.string(),
  expiresAt: z.number(),
});
