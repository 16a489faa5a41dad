import fs from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { DEVICE_PACKAGE_NOT_BUILT, DEVICE_PACKAGE_PATH, errorBodySchema, platformSetupSchema, type ErrorBody } from '@latchkey/contract';
import { findDownloadsDir, isLoopbackUrl, networkAddresses, readDevicePackage } from './downloads.service.js';

export interface DownloadsOptions {
  /** Where the build left the device package; by default apps/api/dist/downloads. */
  dir?: string;
}

/**
 * GET /downloads/latchkey-device.tgz: the device package, `npm pack`ed with the service's build, so a lock's
 * controller installs it from this platform (`sudo npm install -g <PUBLIC_URL>/downloads/latchkey-device.tgz`).
 * Registered outside the API prefix, like /cdn.
 */
export async function downloadsRoutes(instance: FastifyInstance, options: DownloadsOptions = {}) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  app.get(DEVICE_PACKAGE_PATH, { config: { public: true }, schema: { hide: true } }, async (_request, reply) => {
    // Looked up at each request: a build while the service runs makes or replaces it.
    const found = readDevicePackage(options.dir ?? findDownloadsDir());
    if (!found) {
      return reply.code(404).header('cache-control', 'no-store').type('application/json').send({ code: 404, message: DEVICE_PACKAGE_NOT_BUILT } satisfies ErrorBody);
    }
    const { size } = await fs.promises.stat(found.file);
    return reply
      .header('content-type', 'application/gzip')
      .header('content-length', size)
      .header('content-disposition', `attachment; filename="latchkey-device-${found.version}.tgz"`)
      .header('cache-control', 'no-cache')
      .header('x-content-type-options', 'nosniff')
      .send(fs.createReadStream(found.file));
  });
}

/**
 * GET /api/platform/setup (signed in): the URLs the portal hands to other machines, whether they are
 * loopback addresses no other machine can reach, this machine's network addresses, and the device package.
 */
export async function platformSetupRoutes(instance: FastifyInstance, options: DownloadsOptions = {}) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const { publicUrl } = app.config;
  const brokerUrl = app.config.mqtt.publicUrl;

  app.get(
    '/platform/setup',
    {
      onRequest: app.authenticate,
      schema: { tags: ['platform'], security: [{ bearer: [] }], response: { 200: platformSetupSchema, 401: errorBodySchema } },
    },
    async () => {
      const found = readDevicePackage(options.dir ?? findDownloadsDir());
      const publicUrlIsLoopback = isLoopbackUrl(publicUrl);
      const brokerUrlIsLoopback = isLoopbackUrl(brokerUrl);
      return {
        publicUrl,
        publicUrlIsLoopback,
        brokerUrl,
        brokerUrlIsLoopback,
        // Only while they are needed (a loopback URL to replace): a deployment's internal addresses are no
        // business of every signed-in account.
        networkAddresses: publicUrlIsLoopback || brokerUrlIsLoopback ? networkAddresses() : [],
        devicePackage: found && { url: `${publicUrl}${DEVICE_PACKAGE_PATH}`, version: found.version },
      };
    },
  );
}
