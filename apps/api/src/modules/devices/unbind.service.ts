import { and, eq, gt, inArray, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { lockDevices, locks, revokedDeviceCertificates } from '../../db/schema.js';

/**
 * Unbinding, shared by everything that removes a device: the owner's "Unbind", a replacement, and the
 * deletion of what owns a device (its lock, its application). Apart from device-binding.service.ts, which reads
 * locks through the locks service, so the locks and applications services use it without an import cycle.
 */

type DeviceRow = typeof lockDevices.$inferSelect;

/** Revokes a device's certificates at once: its current one and any still within a renewal grace. */
export async function revokeDevice(tx: Db, device: Pick<DeviceRow, 'id' | 'certificateSerial'>): Promise<void> {
  await tx.update(revokedDeviceCertificates).set({ revokedAt: sql`now()` }).where(and(eq(revokedDeviceCertificates.deviceId, device.id), gt(revokedDeviceCertificates.revokedAt, sql`now()`)));
  if (device.certificateSerial) await tx.insert(revokedDeviceCertificates).values({ serial: device.certificateSerial, deviceId: device.id }).onConflictDoNothing();
}

/**
 * Before a lock or an application is deleted, in the same transaction: the devices of the locks `lockIds`
 * selects are removed and their certificates revoked, exactly as an unbind does (a cascade would drop the
 * rows and leave the certificates good). Answers the devices' ids: once committed, the caller cuts each
 * off and clears its retained config with `forgetDevice`.
 */
export async function unbindDevicesOfLocks(tx: Db, lockIds: SQL): Promise<string[]> {
  const removed = await tx
    .delete(lockDevices)
    .where(inArray(lockDevices.lockId, tx.select({ id: locks.id }).from(locks).where(lockIds)))
    .returning({ id: lockDevices.id, certificateSerial: lockDevices.certificateSerial });
  for (const device of removed) await revokeDevice(tx, device);
  return removed.map((device) => device.id);
}
