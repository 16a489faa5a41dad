import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import type { BuildOptions } from './app.js';
import type { Config } from './config.js';
import { createDatabase, type Database, type Db } from './db/client.js';
import { AccessCache } from './lib/access-cache.js';
import { Passwords } from './lib/passwords.js';
import { SecretBox } from './lib/secret-box.js';
import { sealClearSecrets } from './lib/clear-secrets.js';
import { TokenService } from './lib/tokens.js';
import { Outbound } from './lib/outbound.js';
import { Issuers } from './lib/issuer-discovery.js';
import { ApplicationReads } from './modules/applications/applications.service.js';
import { PlatformCa } from './plugins/platform-ca.js';
import { LiveEvents } from './plugins/live-events.js';
import { findLock } from './modules/locks/locks.service.js';
import { getActivity } from './modules/activity/activity.service.js';
import { WebhookDispatcher } from './modules/webhooks/delivery.js';
import { registerDeviceBroker } from './modules/devices/device-broker.js';
import { registerDeviceRuntime } from './modules/devices/runtime/device-runtime.js';
import { registerVirtualDevices } from './modules/devices/virtual/virtual-devices.js';
import { createLogoStorage } from './plugins/storage/index.js';
import { createMailer } from './plugins/mailer/index.js';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    db: Db;
    database: Database;
    tokens: TokenService;
    passwords: Passwords;
    redis: Redis | null;
    /** Sessions, ownership and application lists, kept per instance and dropped on the database's notice. */
    accessCache: AccessCache;
    /** Issues and checks the certificates lock users sign their operations with. */
    platformCa: PlatformCa;
    /** Webhook deliveries: the outbox relay and the queue's workers (modules/webhooks/delivery.ts). */
    webhooks: WebhookDispatcher;
    /** The outbound guard every call to an owner-given URL goes through (its OUTBOUND_ALLOW hosts, its connections). */
    outbound: Outbound;
    /** Third-party issuers' key sets and OpenID configurations, read through this app's outbound guard. */
    issuers: Issuers;
    /** Prepared application reads and this instance's cache of encoded application bodies. */
    applicationReads: ApplicationReads;
  }
}

export const SECRETS_UNENCRYPTED_WARNING =
  'SECRETS_ENCRYPTION_KEY is not set: the token signing keys, the CA private keys, the webhook secrets and the other server secrets in the database are stored unencrypted, and `npm run backup` refuses to copy them unless given --allow-clear-secrets. Set it (32+ characters) to encrypt them at rest: the next start seals those already stored.';

/**
 * The database, caches, stores, mailer and queues, each decorated on the app, and the one onClose that
 * stops them. The webhook dispatcher is made here and started by registerHttp, once its metrics are wired.
 */
export async function createInfrastructure(app: FastifyInstance, config: Config, options: BuildOptions): Promise<void> {
  const ownsDatabase = !options.database;
  const database = options.database ?? (await createDatabase({ url: config.database.url, dataDir: path.join(config.dataDir, 'pgdata'), poolSize: config.database.poolSize }));
  if (ownsDatabase) await database.migrate();
  const redis = config.redisUrl ? new Redis(config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false }) : null;
  app.decorate('config', config);
  app.decorate('database', database);
  app.decorate('db', database.db);
  // The secrets platform-ca and the webhooks keep in the database are sealed with this box.
  const secretBox = new SecretBox(config.secretsEncryptionKey);
  // Without a key, a warning at every start; with one, what was stored in clear before it is sealed now.
  if (!config.secretsEncryptionKey) app.log.warn(SECRETS_UNENCRYPTED_WARNING);
  else {
    const sealed = await sealClearSecrets((text, values) => database.executeSql(text, values), secretBox);
    if (sealed > 0) app.log.info(`Sealed ${sealed} secrets stored in clear before SECRETS_ENCRYPTION_KEY was set`);
  }
  const outbound = new Outbound({ allowHosts: config.outbound.allowHosts, hints: config.outbound.hints });
  app.decorate('outbound', outbound);
  app.decorate('issuers', new Issuers(outbound));
  app.decorate('applicationReads', new ApplicationReads(database.db));
  if (config.outbound.allowHosts.length > 0)
    app.log.warn(`OUTBOUND_ALLOW lets ${config.outbound.allowHosts.join(', ')} through the outbound guard: for development and tests only`);
  app.decorate('tokens', await TokenService.create(config, database.db));
  app.decorate('passwords', new Passwords(config.argon2));
  app.decorate('redis', redis);
  // Off (ACCESS_CACHE=false) it never answers, and every request reads the session row as before.
  const accessCache = new AccessCache();
  if (config.database.accessCache) await accessCache.start(database);
  app.decorate('accessCache', accessCache);
  // The sandbox's live updates: one LISTEN per instance, fanned out to this instance's SSE clients.
  const liveEvents = new LiveEvents(database, { lock: (id) => findLock(database.db, id), activity: (id) => getActivity(database.db, id) }, app.log);
  await liveEvents.start();
  app.decorate('liveEvents', liveEvents);
  app.decorate('platformCa', await PlatformCa.load(database.db, secretBox));
  // The device CA and broker (app.deviceCa, app.deviceBus, app.mqtt); its TLS port opens only in app.mqtt.listen().
  await registerDeviceBroker(app);
  // Device presence, state, results and configs on that bus; app.deviceRelay for the operations routes.
  await registerDeviceRuntime(app);
  // Locks without a provisioned device: the same controller in-process (app.virtualDevices).
  registerVirtualDevices(app);
  app.decorate('storage', await createLogoStorage(config, database.db));
  app.decorate('mailer', createMailer(config, app.log));
  const webhookDispatcher = new WebhookDispatcher(database, config.webhooks, app.log, outbound, secretBox);
  app.decorate('webhooks', webhookDispatcher);
  app.addHook('onClose', async () => {
    app.storage.close?.();
    await app.mailer.close();
    await webhookDispatcher.stop();
    redis?.disconnect();
    app.tokens.stop();
    await accessCache.stop();
    await liveEvents.stop();
    await outbound.close();
    if (ownsDatabase) await database.close();
  });
}
