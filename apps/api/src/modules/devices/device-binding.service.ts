/** A lock's device, bound and unbound: its provisioning code, its certificate and the broker's admission, the CRL. */
import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { and, eq, gt, lte, or, sql } from 'drizzle-orm';
import { deviceErrors, deviceTopic, deviceTopicPrefix, PROVISIONING_CODE_TTL_S, type DeviceCreated, type DeviceStatus, type ProvisioningResponse } from '@latchkey/contract';
import type { Db } from '../../db/client.js';
import { lockDevices, revokedDeviceCertificates } from '../../db/schema.js';
import { badRequest, notFound } from '../../errors.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { GroupCommit } from '../../lib/group-commit.js';
import { normaliseSerial, type DeviceAuthority } from '../../plugins/mqtt/authority.js';
import { resetCodesForNewSecret } from '../access-codes/access-codes.service.js';
import { newOfflineCodeSecret } from '../access-codes/offline-secrets.service.js';
import { diff, recordChange, type ChangeActor } from '../history/history.service.js';
import { getLockRow } from '../locks/locks.service.js';
import type { DeviceCa } from './device-ca.js';
import { certificatePublicKeyPem } from './runtime/device-events.js';
import { revokeDevice } from './unbind.service.js';

/** Provisioning codes: 10 characters from an alphabet without 0/O or 1/I, 50 random bits, shown as XXXXX-XXXXX. */
const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const CODE_LENGTH = 10;

function newCode(): string {
  const bytes = randomBytes(CODE_LENGTH);
  const chars = [...bytes].map((b) => CODE_ALPHABET[b & 31]);
  return `${chars.slice(0, 5).join('')}-${chars.slice(5).join('')}`;
}

/** A code is compared without case, spaces or dashes, as a person may type it. */
const hashCode = (code: string) => createHash('sha256').update(code.toUpperCase().replace(/[\s-]/g, '')).digest('hex');

const seconds = (date: Date | null) => (date ? Math.floor(date.getTime() / 1000) : null);

/**
 * What the broker asks of the database: a device is admitted with the certificate its row holds now. The
 * connects waiting together are looked up together, in one statement (lib/group-commit.ts): in a reconnect
 * storm a device's admission waits for one lookup, not for one per device ahead of it.
 */
export function deviceAuthority(db: Db, ca: DeviceCa): DeviceAuthority {
  let brokerTls: Promise<Awaited<ReturnType<DeviceAuthority['brokerTls']>>> | null = null;
  let serviceTls: Promise<Awaited<ReturnType<DeviceAuthority['serviceTls']>>> | null = null;
  const lookups = new GroupCommit<Lookup, boolean>((items) => currentCertificates(db, items), { missing: false });
  return {
    isCurrentCertificate: async (deviceId, serial) => DEVICE_ID.test(deviceId) && lookups.submit({ deviceId, serial: normaliseSerial(serial) }),
    brokerTls: (hosts) => (brokerTls ??= ca.issueServerCertificate(hosts)),
    serviceTls: () => (serviceTls ??= ca.issueServiceCertificate()),
  };
}

const DEVICE_ID = /^[0-9a-f-]{36}$/;

interface Lookup {
  deviceId: string;
  /** Normalised (normaliseSerial). */
  serial: string;
}

/** isCurrentCertificate for several certificates in one statement: → the numbers (`n`) of those that are current. */
async function currentCertificates(db: Db, items: (Lookup & { n: number })[]): Promise<Map<number, boolean>> {
  const rows = (
    (await db.execute(sql`
      select i.n from jsonb_to_recordset(${JSON.stringify(items)}::jsonb) as i(n int, "deviceId" uuid, serial text)
      join ${lockDevices} d on d.id = i."deviceId"
      where (d.certificate_serial = i.serial
          or exists (select 1 from ${revokedDeviceCertificates} r where r.serial = i.serial and r.device_id = d.id and r.revoked_at > now()))
        -- A serial once revoked is never accepted again.
        and not exists (select 1 from ${revokedDeviceCertificates} r where r.serial = i.serial and r.revoked_at <= now())`)) as unknown as { rows: { n: number }[] }
  ).rows;
  return new Map(rows.map((row) => [Number(row.n), true]));
}

/**
 * True when `serial` is the certificate the device holds now, or the one it renewed from while that one's
 * grace lasts (a revocation dated in the future). A revoked certificate, an unbound device or one not yet
 * provisioned is refused.
 */
export async function isCurrentCertificate(db: Db, deviceId: string, serial: string): Promise<boolean> {
  if (!DEVICE_ID.test(deviceId)) return false;
  const wanted = normaliseSerial(serial);
  const rows = await db
    .select({ id: lockDevices.id })
    .from(lockDevices)
    .where(
      and(
        eq(lockDevices.id, deviceId),
        or(
          eq(lockDevices.certificateSerial, wanted),
          sql`exists (select 1 from ${revokedDeviceCertificates} r where r.serial = ${wanted} and r.device_id = ${lockDevices.id} and r.revoked_at > now())`,
        ),
        // A serial once revoked is never accepted again.
        sql`not exists (select 1 from ${revokedDeviceCertificates} r where r.serial = ${wanted} and r.revoked_at <= now())`,
      ),
    )
    .limit(1);
  return rows.length > 0;
}

/**
 * A new device for the lock, with a single-use provisioning code (stored hashed, 15 minutes). A device the
 * lock had is replaced: its certificate is revoked, and the caller cuts its connection (`replaced`).
 */
export async function createDevice(db: Db, applicationId: string, lockId: string, by: ChangeActor): Promise<{ created: DeviceCreated; replaced: string | null }> {
  const lock = await getLockRow(db, applicationId, lockId);
  const code = newCode();
  const expiresAt = new Date(Date.now() + PROVISIONING_CODE_TTL_S * 1000);
  return db.transaction(async (tx) => {
    const [old] = await tx.delete(lockDevices).where(eq(lockDevices.lockId, lock.id)).returning();
    if (old) await revokeDevice(tx, old);
    const [row] = await tx.insert(lockDevices).values({ lockId: lock.id, codeHash: hashCode(code), codeExpiresAt: expiresAt }).returning({ id: lockDevices.id });
    await recordChange(tx, { applicationId, actor: by, kind: 'lock', subject: lock.name, changes: diff({ device: old?.id ?? null }, { device: row!.id }) });
    return { created: { deviceId: row!.id, provisioningCode: code, expiresAt: seconds(expiresAt)! }, replaced: old?.id ?? null };
  });
}

export async function getDeviceStatus(db: Db, applicationId: string, lockId: string): Promise<DeviceStatus> {
  const lock = await getLockRow(db, applicationId, lockId);
  const [row] = await db.select().from(lockDevices).where(eq(lockDevices.lockId, lock.id)).limit(1);
  if (!row) throw notFound(deviceErrors.noDevice);
  return {
    deviceId: row.id,
    provisioned: row.provisionedAt !== null,
    connected: row.connected,
    lastSeen: seconds(row.lastSeen),
    firmware: row.firmware,
    locked: row.state?.locked ?? null,
    codeExpiresAt: row.codeHash ? seconds(row.codeExpiresAt) : null,
  };
}

/** Unbinds the lock's device: its certificate is revoked and the lock is a sandbox lock again. Answers the device's id. */
export async function deleteDevice(db: Db, applicationId: string, lockId: string, by: ChangeActor): Promise<string> {
  const lock = await getLockRow(db, applicationId, lockId);
  return db.transaction(async (tx) => {
    const [old] = await tx.delete(lockDevices).where(eq(lockDevices.lockId, lock.id)).returning();
    if (!old) throw notFound(deviceErrors.noDevice);
    await revokeDevice(tx, old);
    // A virtual lock again: its offline codes come from the virtual lock's secret now, not the device's.
    if (old.provisionedAt) await resetCodesForNewSecret(tx, lock.id);
    await recordChange(tx, { applicationId, actor: by, kind: 'lock', subject: lock.name, changes: diff({ device: old.id }, { device: null }) });
    return old.id;
  });
}

/**
 * After an unbind or a replacement: the device's connection is cut at once, and its retained state and
 * config (the lock's users and their keys) are removed from the broker (an empty retained message).
 */
export function forgetDevice(app: FastifyInstance, deviceId: string): void {
  // Not awaited: an external broker out of reach must not hold up the owner's answer. A connected device is
  // first sent a config naming nobody (runtime/device-runtime.ts), so it obeys nobody at its local endpoint either.
  const farewell = app.deviceRuntime.farewell(deviceId).catch((err: unknown) => app.log.warn({ err, deviceId }, 'unbound device not sent its last config'));
  void farewell.then(() => {
    app.deviceBus.disconnect(deviceId);
    for (const topic of ['config', 'state'] as const) {
      app.deviceBus.publish(deviceTopic(deviceId, topic), '', { retain: true }).catch((err: unknown) => app.log.warn({ err, deviceId }, 'retained device message not cleared'));
    }
  });
}

/**
 * The device's side: a waiting provisioning code and a CSR give the device its certificate. The CSR is
 * checked before the code is spent, and the code is spent in one statement, so it works exactly once.
 * The device also gets its offline-code secret, once: kept sealed with `box`, never shown again.
 */
export async function provisionDevice(
  db: Db,
  ca: DeviceCa,
  box: SecretBox,
  input: { code: string; csr: string },
  endpoints: { mqttUrl: string; platformCaPem: string },
): Promise<ProvisioningResponse> {
  const codeHash = hashCode(input.code);
  const [waiting] = await db
    .select({ id: lockDevices.id })
    .from(lockDevices)
    .where(and(eq(lockDevices.codeHash, codeHash), gt(lockDevices.codeExpiresAt, sql`now()`)))
    .limit(1);
  if (!waiting) throw badRequest(deviceErrors.codeInvalid);
  const issued = await ca.issueDeviceCertificate(input.csr, waiting.id);
  const offlineCodeSecret = newOfflineCodeSecret();
  const [device] = await db
    .update(lockDevices)
    .set({
      codeHash: null,
      codeExpiresAt: null,
      provisionedAt: sql`now()`,
      certificateSerial: issued.serial,
      certificateNotAfter: issued.notAfter,
      certificateSubjectSerial: true,
      // Its events are signed with this key; their chain starts afresh with the new device.
      certificatePublicKey: certificatePublicKeyPem(issued.certificate),
      offlineCodeSecret: box.seal(offlineCodeSecret),
    })
    .where(and(eq(lockDevices.id, waiting.id), eq(lockDevices.codeHash, codeHash), gt(lockDevices.codeExpiresAt, sql`now()`)))
    .returning({ id: lockDevices.id, lockId: lockDevices.lockId });
  if (!device) throw badRequest(deviceErrors.codeInvalid);
  await resetCodesForNewSecret(db, device.lockId);
  return {
    deviceId: device.id,
    lockId: device.lockId,
    certificate: issued.certificate,
    caCertificates: [ca.certificatePem, endpoints.platformCaPem],
    mqttUrl: endpoints.mqttUrl,
    topicPrefix: deviceTopicPrefix(device.id),
    offlineCodeSecret,
  };
}

/** The CRL: every certificate revoked by now (those within a renewal grace are not yet). */
export async function deviceCrl(db: Db, ca: DeviceCa): Promise<string> {
  const revoked = await db
    .select({ serial: revokedDeviceCertificates.serial, revokedAt: revokedDeviceCertificates.revokedAt })
    .from(revokedDeviceCertificates)
    .where(lte(revokedDeviceCertificates.revokedAt, sql`now()`));
  return ca.crl(revoked);
}
