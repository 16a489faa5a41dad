import type { FastifyInstance } from 'fastify';
import type { BuildOptions } from './app.js';
import type { Config } from './config.js';
import { accountRoutes } from './modules/account/account.routes.js';
import { accountTrustRoutes } from './modules/account/account-trust.routes.js';
import { activityRoutes } from './modules/activity/activity.routes.js';
import { accessCodesRoutes } from './modules/access-codes/access-codes.routes.js';
import { activityExportRoutes } from './modules/activity-export/activity-export.routes.js';
import { lockEventsRoutes } from './modules/locks/lock-events.routes.js';
import { simulateRoutes } from './modules/locks/simulate.routes.js';
import { locksRoutes } from './modules/locks/locks.routes.js';
import { outboxRoutes } from './modules/outbox/outbox.routes.js';
import { historyRoutes } from './modules/history/history.routes.js';
import { webhooksRoutes } from './modules/webhooks/webhooks.routes.js';
import { webhookTestEventRoutes } from './modules/webhooks/test-event.routes.js';
import { sharesRoutes } from './modules/shares/shares.routes.js';
import { applicationsRoutes } from './modules/applications/applications.routes.js';
import { authRoutes } from './modules/auth/auth.routes.js';
import { healthRoutes } from './modules/health/health.routes.js';
import { jwksRoutes } from './modules/keys/keys.routes.js';
import { platformUsersRoutes } from './modules/platform-users/platform-users.routes.js';
import { cdnRoutes, logosRoutes } from './modules/logos/logos.routes.js';
import { emailPreviewRoutes } from './modules/email-preview/email-preview.routes.js';
import { certificatesRoutes } from './modules/certificates/certificates.routes.js';
import { operationsRoutes } from './modules/operations/operations.routes.js';
import { devicesSdkRoutes } from './modules/devices-sdk/devices-sdk.routes.js';
import { devicesRoutes } from './modules/devices/devices.routes.js';
import { brokerAuthRoutes } from './modules/broker-auth/broker-auth.routes.js';
import { tilesRoutes } from './modules/tiles/tiles.routes.js';
import { sitesRoutes } from './modules/sites/sites.routes.js';
import { downloadsRoutes, platformSetupRoutes } from './modules/downloads/downloads.routes.js';

/**
 * Every module's routes, in order, each registration awaited: the API under API_PREFIX, then what lives
 * outside it — the /cdn logos, /.well-known/jwks.json and the device package's downloads.
 */
export async function registerModules(app: FastifyInstance, config: Config, options: BuildOptions): Promise<void> {
  await app.register(
    async (api) => {
      await api.register(healthRoutes);
      await api.register(authRoutes, { prefix: '/auth' });
      await api.register(certificatesRoutes);
      await api.register(operationsRoutes);
      await api.register(devicesSdkRoutes);
      await api.register(devicesRoutes);
      await api.register(brokerAuthRoutes);
      await api.register(accountRoutes);
      await api.register(accountTrustRoutes);
      await api.register(applicationsRoutes);
      await api.register(platformUsersRoutes);
      await api.register(logosRoutes);
      await api.register(emailPreviewRoutes);
      await api.register(locksRoutes);
      await api.register(lockEventsRoutes);
      await api.register(accessCodesRoutes);
      await api.register(simulateRoutes);
      await api.register(activityRoutes);
      await api.register(activityExportRoutes);
      await api.register(sharesRoutes);
      await api.register(outboxRoutes);
      await api.register(historyRoutes);
      await api.register(webhooksRoutes);
      await api.register(tilesRoutes);
      await api.register(sitesRoutes);
      await api.register(webhookTestEventRoutes);
      await api.register(platformSetupRoutes, { dir: options.downloadsDir });
    },
    { prefix: config.apiPrefix },
  );
  await app.register(cdnRoutes);
  await app.register(jwksRoutes);
  await app.register(downloadsRoutes, { dir: options.downloadsDir });
}
