import type { FastifyInstance } from 'fastify';
import { and, eq, lt, sql } from 'drizzle-orm';
import { DEVICE_CERTIFICATE_DAYS, DEVICE_TOPIC_ROOT, deviceTopic, MAX_CSR_LENGTH, type deviceCertificateMessageSchema } from '@latchkey/contract';
import type { z } from 'zod';
import { lockDevices, revokedDeviceCertificates } from '../../db/schema.js';
import { SecretBox } from '../../lib/secret-box.js';
import { registerMqtt } from '../../plugins/mqtt/index.js';
import { DeviceCa } from './device-ca.js';
import { deviceAuthority } from './device-binding.service.js';
import { renewedPublicKeys } from './runtime/device-events.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Issues device, broker and service certificates and the CRL (modules/devices/device-ca.ts). */
    deviceCa: DeviceCa;
  }
}

/** The certificate a device renewed from is still accepted this long, in case the new one never reached it. */
export const RENEWAL_GRACE_S = 24 * 3600;
/** A device is given at most one new certificate in this time, however often it asks. */
const RENEWAL_INTERVAL_S = 60;

/**
 * The device CA, the broker (`app.deviceBus`, `app.mqtt`) and certificate renewal over MQTT: a device
 * publishes a CSR on …/renew and is answered on …/certificate.
 */
export async function registerDeviceBroker(app: FastifyInstance): Promise<void> {
  const ca = await DeviceCa.load(app.db, new SecretBox(app.config.secretsEncryptionKey));
  app.decorate('deviceCa', ca);
  await registerMqtt(app, deviceAuthority(app.db, ca));
  await app.deviceBus.subscribe(`${DEVICE_TOPIC_ROOT}/+/renew`, (topic, payload) => {
    const deviceId = topic.split('/')[2]!;
    renewCertificate(app, deviceId, payload).catch((err: unknown) => app.log.warn({ err, deviceId }, 'device certificate renewal failed'));
  });
}

/**
 * A new certificate for a provisioned device from the CSR it sent. With several instances on one external
 * broker each receives the request; the row lock below lets only the first of them have the CA sign.
 */
async function renewCertificate(app: FastifyInstance, deviceId: string, payload: Buffer): Promise<void> {
  if (payload.length > MAX_CSR_LENGTH || !/^[0-9a-f-]{36}$/.test(deviceId)) {
    app.log.info({ deviceId }, 'device certificate renewal refused: not a device id or CSR');
    return;
  }
  // The once-a-minute check comes before the CA signs: a device asking again and again costs a row lock, not a signature.
  const issued = await app.db.transaction(async (tx) => {
    const recent = sql`now() + make_interval(days => ${DEVICE_CERTIFICATE_DAYS}) - make_interval(secs => ${RENEWAL_INTERVAL_S})`;
    const [before] = await tx
      .select({ serial: lockDevices.certificateSerial, publicKey: lockDevices.certificatePublicKey })
      .from(lockDevices)
      .where(and(eq(lockDevices.id, deviceId), lt(lockDevices.certificateNotAfter, recent)))
      .for('update');
    if (!before?.serial) return null;
    const certificate = await app.deviceCa.issueDeviceCertificate(payload.toString('utf8'), deviceId);
    await tx
      .update(lockDevices)
      // Its events are verified with the new key, and with the one before: events signed before the renewal may still be on their way.
      .set({ certificateSerial: certificate.serial, certificateNotAfter: certificate.notAfter, certificateSubjectSerial: true, certificatePublicKey: renewedPublicKeys(certificate.certificate, before.publicKey) })
      .where(eq(lockDevices.id, deviceId));
    await tx
      .insert(revokedDeviceCertificates)
      .values({ serial: before.serial, deviceId, revokedAt: sql`now() + make_interval(secs => ${RENEWAL_GRACE_S})` })
      .onConflictDoNothing();
    return certificate;
  });
  if (!issued) {
    app.log.info({ deviceId }, 'device certificate renewal refused: unknown, unprovisioned or renewed within the minute');
    return;
  }
  const message: z.infer<typeof deviceCertificateMessageSchema> = { certificate: issued.certificate };
  await app.deviceBus.publish(deviceTopic(deviceId, 'certificate'), JSON.stringify(message));
  app.log.info({ deviceId, serial: issued.serial }, 'device certificate renewed');
}
