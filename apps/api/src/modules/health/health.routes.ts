import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { apiErrors, errorBodySchema, portalConfigSchema } from '@latchkey/contract';
import { AppError } from '../../errors.js';

export async function healthRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();

  app.get('/health', { config: { public: true }, schema: { tags: ['health'], response: { 200: z.object({ status: z.literal('ok') }) } } }, async () => ({
    status: 'ok' as const,
  }));

  /**
   * Readiness: the database answers, and the instance is not draining for a shutdown (server.ts: SIGTERM
   * fails readiness first, then closes the port). A load balancer stops routing here while it is not ready.
   */
  app.get(
    '/ready',
    { config: { public: true }, schema: { tags: ['health'], response: { 200: z.object({ status: z.literal('ready') }), 503: errorBodySchema } } },
    async () => {
      if (app.lifecycle.draining) throw new AppError(503, apiErrors.serviceUnavailable);
      try {
        await Promise.race([
          app.database.ping(),
          new Promise((_, reject) => setTimeout(() => reject(new Error('ping timeout')), 1500).unref()),
        ]);
      } catch {
        throw new AppError(503, apiErrors.serviceUnavailable);
      }
      return { status: 'ready' as const };
    },
  );

  app.get('/config', { config: { public: true }, schema: { tags: ['health'], response: { 200: portalConfigSchema } } }, async () => ({
    privacyPolicyUrl: app.config.portal.privacyPolicyUrl,
    uploadBaseUrl: app.storage.uploadBaseUrl,
    cdnBaseUrl: app.config.storage.cdnBaseUrl,
    docsUrl: app.config.portal.docsUrl,
    platformAudience: app.config.platformTokens.audience,
    emailDelivery: app.mailer.driver,
  }));
}
