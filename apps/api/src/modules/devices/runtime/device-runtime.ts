import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { DEVICE_TOPIC_ROOT, deviceResultSchema, deviceStateMessageSchema, type DeviceStateMessage } from '@latchkey/contract';
import type { Db } from '../../../db/client.js';
import type { DeviceBus } from '../../../plugins/mqtt/bus.js';
import { allowedDirectAccessEndpoints } from '../../../plugins/mqtt/direct-access.js';
import type { AccessCache } from '../../../lib/access-cache.js';
import type { LiveEvents } from '../../../plugins/live-events.js';
import type { PlatformCa } from '../../../plugins/platform-ca.js';
import type { DeviceRelay } from '../../operations/operations.service.js';
import { ConfigPublisher } from './config-publisher.js';
import { parseDeviceTopic, readJson, readPresence } from './device-messages.js';
import { markAllOffline, recordPresence, recordState } from './device-status.js';
import { DeviceOperationRelay } from './relay.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Hands a device-backed lock's operations to its device (modules/devices/runtime). */
    deviceRelay: DeviceRelay;
    /** Presence, state, results and configs of the devices, over app.deviceBus. */
    deviceRuntime: DeviceRuntime;
  }
}

export interface DeviceRuntimeOptions {
  db: Db;
  bus: DeviceBus;
  ca: PlatformCa;
  liveEvents: Pick<LiveEvents, 'onNotice'>;
  /** Changes to applications and their owners (the owners are admins in every config). */
  accessCache: Pick<AccessCache, 'onApplicationChange'>;
  timeoutMs: number;
  log: FastifyBaseLogger;
  /**
   * The embedded broker of the only instance there can be (PGlite): at start no device is connected
   * anywhere. With PostgreSQL, other instances' brokers may hold devices (plugins/mqtt/bridge.ts).
   */
  standaloneBroker: boolean;
}

/**
 * The service's side of the devices' conversation, whichever broker carries it: it hears every device's
 * presence, state and results (`latchkey/d/+/…`), keeps lock_devices in step, answers the relay's waiting
 * requests, and keeps each device's config current. Whatever a device sends that is not the contract's
 * shape is logged and dropped: it changes nothing and never reaches the broker as an error.
 */
export class DeviceRuntime {
  readonly relay: DeviceOperationRelay;
  readonly configs: ConfigPublisher;
  /** Reports of one device are handled in the order they came; different devices' at once. */
  private readonly chains = new Map<string, Promise<void>>();
  private stopNotices: (() => void) | null = null;

  constructor(private readonly options: DeviceRuntimeOptions) {
    this.relay = new DeviceOperationRelay(options.db, options.bus, options.timeoutMs, options.log, options.ca);
    this.configs = new ConfigPublisher(options.db, options.bus, options.ca, options.log);
  }

  async start(): Promise<void> {
    const { bus, db, liveEvents } = this.options;
    if (this.options.standaloneBroker) await markAllOffline(db);
    const stopLockNotices = liveEvents.onNotice((payload) => this.configs.onNotice(payload));
    const stopApplicationNotices = this.options.accessCache.onApplicationChange((ids) =>
      void this.configs.applicationChanged(ids).catch((error: unknown) => this.options.log.warn({ err: error }, 'device configs after an application change')),
    );
    this.stopNotices = () => {
      stopLockNotices();
      stopApplicationNotices();
    };
    await bus.subscribe(`${DEVICE_TOPIC_ROOT}/+/presence`, (topic, payload) => this.receive(topic, payload));
    await bus.subscribe(`${DEVICE_TOPIC_ROOT}/+/state`, (topic, payload) => this.receive(topic, payload));
    await bus.subscribe(`${DEVICE_TOPIC_ROOT}/+/result`, (topic, payload) => this.receive(topic, payload));
  }

  stop(): void {
    this.stopNotices?.();
    this.configs.stop();
    this.relay.stop();
  }

  /** Resolves once every report received so far has been handled (tests). */
  async settled(): Promise<void> {
    while (this.chains.size > 0) await Promise.all(this.chains.values());
    await this.configs.idle();
  }

  private receive(topic: string, payload: Buffer): void {
    const { log } = this.options;
    const parsed = parseDeviceTopic(topic);
    if (!parsed) return void log.warn({ topic }, 'device message on an unknown topic: dropped');
    const { deviceId, kind } = parsed;
    if (kind === 'result') {
      // Answered at once: the relay's waiting request needs no database.
      const result = readJson(payload, deviceResultSchema);
      if (!result.ok) return void log.warn({ deviceId, problem: result.problem }, 'device result dropped');
      return this.relay.onResult(deviceId, result.value);
    }
    const previous = this.chains.get(deviceId) ?? Promise.resolve();
    const next = previous
      .then(() => this.handleReport(deviceId, kind, payload))
      .catch((err: unknown) => log.warn({ err, deviceId, kind }, 'device report not recorded'))
      .finally(() => {
        if (this.chains.get(deviceId) === next) this.chains.delete(deviceId);
      });
    this.chains.set(deviceId, next);
  }

  private async handleReport(deviceId: string, kind: string, payload: Buffer): Promise<void> {
    const { db, log } = this.options;
    if (kind === 'presence') {
      const presence = readPresence(payload);
      if (!presence.ok) return void log.warn({ deviceId, problem: presence.problem }, 'device presence dropped');
      const change = await recordPresence(db, deviceId, presence.value === 'online');
      if (!change) return void log.info({ deviceId }, 'presence of no provisioned device: ignored');
      if (presence.value === 'online' && (change.changed || change.neverConfigured)) this.configs.deviceOnline(change.lockId, change.neverConfigured);
      return;
    }
    if (kind === 'state') {
      const state = readJson(payload, deviceStateMessageSchema);
      if (!state.ok) return void log.warn({ deviceId, problem: state.problem }, 'device state dropped');
      await recordState(db, deviceId, this.withAllowedEndpoints(deviceId, state.value));
    }
  }

  /**
   * The embedded broker has kept, of a state's direct-access endpoints, only those on a private network or
   * at the device's own address. An external broker does not say where a device connects from: only
   * private-network endpoints are kept.
   */
  private withAllowedEndpoints(deviceId: string, report: DeviceStateMessage): DeviceStateMessage {
    if (this.options.bus.kind !== 'external' || !report.directAccessEndpoints) return report;
    const allowed = allowedDirectAccessEndpoints(report.directAccessEndpoints, null);
    if (allowed.length < report.directAccessEndpoints.length) {
      this.options.log.warn({ deviceId, refused: report.directAccessEndpoints.filter((url) => !allowed.includes(url)) }, 'direct-access endpoints refused: not on a private network');
    }
    return { ...report, directAccessEndpoints: allowed };
  }
}

/**
 * Starts the device runtime on `app.deviceBus` and decorates `app.deviceRelay` for the operations routes.
 * Register after the bus and the live events, before the routes.
 */
export async function registerDeviceRuntime(app: FastifyInstance): Promise<void> {
  const runtime = new DeviceRuntime({
    db: app.db,
    bus: app.deviceBus,
    ca: app.platformCa,
    liveEvents: app.liveEvents,
    accessCache: app.accessCache,
    standaloneBroker: app.deviceBus.kind === 'embedded' && app.database.kind === 'pglite',
    timeoutMs: app.config.mqtt.deviceTimeoutMs,
    log: app.log.child({ module: 'devices' }),
  });
  await runtime.start();
  app.decorate('deviceRuntime', runtime);
  app.decorate('deviceRelay', runtime.relay);
  app.addHook('onClose', async () => runtime.stop());
}
