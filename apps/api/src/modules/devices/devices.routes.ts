import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { deviceCreatedSchema, deviceParamsSchema, deviceStatusSchema, errorBodySchema, provisioningRequestSchema, provisioningResponseSchema } from '@latchkey/contract';
import { SecretBox } from '../../lib/secret-box.js';
import { createDevice, deleteDevice, deviceCrl, forgetDevice, getDeviceStatus, provisionDevice } from './device-binding.service.js';

const tags = ['devices'];
const security = [{ bearer: [] }];
const E = errorBodySchema;
const one = '/platform/application/:applicationId/lock/:lockId/device';
const pem = (label: string, base64: string) => `-----BEGIN ${label}-----\n${base64.replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END ${label}-----\n`;

/**
 * Locks that connect: the owner binds a device to a lock (a provisioning code), reads its status and unbinds
 * it; the device turns the code and its CSR into a certificate; external brokers read the CA and its CRL.
 */
export async function devicesRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const owner = { onRequest: [app.authenticate, app.requireOwner] };
  const platformCaPem = pem('CERTIFICATE', app.platformCa.certificateBase64);
  const box = new SecretBox(app.config.secretsEncryptionKey);
  // MQTT_PORT=0 (any free port) names no port a device can use: it is given the port the broker is bound to.
  const mqttUrl = () => {
    const url = new URL(app.config.mqtt.publicUrl);
    if (url.port === '0' && app.mqtt.port) url.port = String(app.mqtt.port);
    return url.toString();
  };

  app.post(
    one,
    { ...owner, schema: { tags, security, summary: 'A provisioning code for a new device; replaces the lock’s device', params: deviceParamsSchema, response: { 201: deviceCreatedSchema, 401: E, 404: E } } },
    async (request, reply) => {
      const { created, replaced } = await createDevice(app.db, request.params.applicationId, request.params.lockId, request.user);
      if (replaced) forgetDevice(app, replaced);
      return reply.code(201).send(created);
    },
  );

  app.get(
    one,
    { ...owner, schema: { tags, security, params: deviceParamsSchema, response: { 200: deviceStatusSchema, 401: E, 404: E } } },
    async (request) => getDeviceStatus(app.db, request.params.applicationId, request.params.lockId),
  );

  app.delete(
    one,
    { ...owner, schema: { tags, security, summary: 'Unbinds the device: its certificate is revoked and its connection cut', params: deviceParamsSchema, response: { 204: z.null(), 401: E, 404: E } } },
    async (request, reply) => {
      forgetDevice(app, await deleteDevice(app.db, request.params.applicationId, request.params.lockId, request.user));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/device-provisioning',
    {
      config: { public: true },
      schema: {
        tags,
        summary: 'A device’s provisioning code and CSR (its own ECDSA P-256 or Ed25519 key) → its certificate',
        body: provisioningRequestSchema,
        response: { 200: provisioningResponseSchema, 400: E, 429: E },
      },
    },
    async (request) => provisionDevice(app.db, app.deviceCa, box, request.body, { mqttUrl: mqttUrl(), platformCaPem }),
  );

  app.get(
    '/device-ca/certificate.pem',
    { config: { public: true, accessUnchanged: true }, schema: { tags, summary: 'The device CA (an external broker’s cafile)', response: { 200: z.string() } } },
    async (_request, reply) => reply.type('application/x-pem-file').send(app.deviceCa.certificatePem),
  );

  app.get(
    '/device-ca/crl.pem',
    { config: { public: true, accessUnchanged: true }, schema: { tags, summary: 'Revoked device certificates (an external broker’s crlfile)', response: { 200: z.string(), 429: E } } },
    async (_request, reply) => reply.type('application/x-pem-file').header('cache-control', 'no-cache').send(await deviceCrl(app.db, app.deviceCa)),
  );
}
