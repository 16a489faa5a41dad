import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { Counter } from 'prom-client';
import {
  DEFAULT_UNLOCK_TIME_S,
  DEVICE_PRESENCE_SETTLE_S,
  DEVICE_REPORT_BURST,
  DEVICE_REPORTS_PER_MINUTE,
  DEVICE_TOPIC_ROOT,
  MIN_OFFLINE_GRACE_S,
  deviceResultSchema,
  deviceStateMessageSchema,
  deviceTopic,
  type DeviceConfig,
  type DeviceStateMessage,
} from '@latchkey/contract';
import type { Db } from '../../../db/client.js';
import { SecretBox } from '../../../lib/secret-box.js';
import type { DeviceBus } from '../../../plugins/mqtt/bus.js';
import { allowedDirectAccessEndpoints } from '../../../plugins/mqtt/direct-access.js';
import type { AccessCache } from '../../../lib/access-cache.js';
import type { LiveEvents } from '../../../plugins/live-events.js';
import type { PlatformCa } from '../../../plugins/platform-ca.js';
import type { DeviceRelay } from '../../operations/operations.service.js';
import { ConfigPublisher } from './config-publisher.js';
import { ConfigReissuer } from './config-reissue.js';
import { InstanceHeartbeat } from './instance-heartbeat.js';
import { EmbeddedBus } from '../../../plugins/mqtt/embedded.js';
import { DeviceEventRecorder, MAX_EVENTS_WAITING, type EventOutcome, type EventRefusal } from './device-events.js';
import { parseDeviceTopic, readJson, readPresence } from './device-messages.js';
import { markAllOffline, recordPresences, recordState, type PresenceChange, type PresenceReport } from './device-status.js';
import { GroupCommit } from '../../../lib/group-commit.js';
import { DeviceOperationRelay } from './relay.js';
import { PresenceAnnouncer, ReportLimiter } from './report-pacing.js';

/** Presence reports recorded in one statement at most. */
const PRESENCE_BATCH = 100;
/** Events of one device logged in one transaction, at most (a reconnected door's backlog goes in runs this long). */
const EVENTS_PER_TRANSACTION = 500;

declare module 'fastify' {
  interface FastifyInstance {
    /** Hands a device-backed lock's operations to its device (modules/devices/runtime). */
    deviceRelay: DeviceRelay;
    /** Presence, state, results and configs of the devices, over app.deviceBus. */
    deviceRuntime: DeviceRuntime;
    /** With the embedded broker: this instance's heartbeat and the devices its broker holds (null with an external broker). */
    instanceHeartbeat: InstanceHeartbeat | null;
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
  /** Opens the locks' access codes, which their configs carry as salted hashes. */
  box: SecretBox;
  /** Counts each door event's outcome (a metric); none: not counted. */
  countEvent?: (outcome: EventOutcome | `refused_${EventRefusal}`) => void;
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
  /** Issues each connected device its config again before it lapses (config-reissue.ts). */
  readonly reissuer: ConfigReissuer;
  /** The doors' signed events (`…/event`), checked and logged once each. */
  readonly events: DeviceEventRecorder;
  /** Events of each device received and not yet handled. */
  private readonly eventsWaiting = new Map<string, number>();
  /**
   * Per device: the events received since its last other report, in a run not yet started (the last thing
   * in its chain). Events that arrive while a run is logged wait in the next one, which takes them all.
   */
  private readonly eventRuns = new Map<string, Buffer[]>();
  /** Reports of one device are handled in the order they came; different devices' at once. */
  private readonly chains = new Map<string, Promise<void>>();
  /** How many presence and state reports of one device are recorded (a flood is held to the rate). */
  readonly reportLimiter = new ReportLimiter(DEVICE_REPORT_BURST, DEVICE_REPORTS_PER_MINUTE);
  /** Per device: the highest config version whose confirmation was recorded past the rate (each is let through once). */
  private readonly confirmedPastRate = new Map<string, number>();
  /** Reports over a device's rate, the latest of each kind, until the rate allows them. */
  private readonly held = new Map<string, { reports: Map<string, Buffer>; timer: NodeJS.Timeout }>();
  private readonly presence: PresenceAnnouncer;
  /**
   * Presence reports of different devices that arrive together are recorded together, one statement for
   * PRESENCE_BATCH at most (a device's next report waits for its previous one: its chain).
   */
  private readonly presenceWrites: GroupCommit<PresenceReport, PresenceChange | null>;
  private pruner: NodeJS.Timeout | undefined;
  private stopNotices: (() => void) | null = null;

  constructor(private readonly options: DeviceRuntimeOptions) {
    this.relay = new DeviceOperationRelay(options.db, options.bus, options.timeoutMs, options.log, options.ca);
    this.configs = new ConfigPublisher(options.db, options.bus, options.ca, options.log, options.box);
    this.reissuer = new ConfigReissuer({ db: options.db, bus: options.bus, reissue: (lockId) => this.configs.reissue(lockId), log: options.log });
    this.configs.fresh = (lockId) => this.reissuer.freshOrTaken(lockId);
    this.presence = new PresenceAnnouncer(options.db, DEVICE_PRESENCE_SETTLE_S, options.log);
    this.presenceWrites = new GroupCommit((reports) => this.writePresences(reports), { missing: null, key: (report) => report.deviceId, maxBatch: PRESENCE_BATCH });
    this.events = new DeviceEventRecorder(options.db, options.log, options.countEvent);
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
    // The configs the devices hold are known before any presence is heard: a device online with a stale one gets a fresh one.
    await this.reissuer.start();
    await bus.subscribe(`${DEVICE_TOPIC_ROOT}/+/presence`, (topic, payload) => this.receive(topic, payload));
    await bus.subscribe(`${DEVICE_TOPIC_ROOT}/+/state`, (topic, payload) => this.receive(topic, payload));
    await bus.subscribe(`${DEVICE_TOPIC_ROOT}/+/result`, (topic, payload) => this.receive(topic, payload));
    await bus.subscribe(`${DEVICE_TOPIC_ROOT}/+/event`, (topic, payload) => this.receive(topic, payload));
    this.pruner = setInterval(() => {
      this.reportLimiter.prune();
      this.confirmedPastRate.clear();
    }, 60_000);
    this.pruner.unref();
  }

  stop(): void {
    this.stopNotices?.();
    clearInterval(this.pruner);
    for (const { timer } of this.held.values()) clearTimeout(timer);
    this.held.clear();
    this.presence.stop();
    this.reissuer.stop();
    this.configs.stop();
    this.relay.stop();
  }

  /** Resolves once every report received so far has been handled (tests). Reports held over a device's rate are not waited for. */
  async settled(): Promise<void> {
    while (this.chains.size > 0) await Promise.all(this.chains.values());
    await this.configs.idle();
  }

  /**
   * Before an unbound device is cut off: a last config naming nobody, with no codes (its withdrawn offline
   * codes still withdrawn) and the shortest grace, one version above what it holds. Cut off, the device would otherwise go on obeying its last config at its
   * local endpoint until that lapsed. Nothing is sent to a device never sent a config.
   */
  async farewell(deviceId: string): Promise<void> {
    const last = this.reissuer.lastSentTo(deviceId);
    if (!last) return;
    const config: DeviceConfig = {
      lockId: last.lockId,
      version: last.version + 1,
      unlockTime: DEFAULT_UNLOCK_TIME_S,
      usageRequirements: {},
      users: [],
      issuedAt: Math.floor(Date.now() / 1000),
      offlineGraceSeconds: MIN_OFFLINE_GRACE_S,
      // Offline codes withdrawn before stay withdrawn: the device computes the others itself, and holds them to their windows.
      ...(last.withdrawn as Pick<DeviceConfig, 'accessCodeSalt' | 'withdrawnOfflineCodes'> | undefined),
    };
    await this.options.bus.publish(deviceTopic(deviceId, 'config'), await this.options.ca.signJws(config));
  }

  /** A presence change recorded but not yet announced: announced once it has held. */
  announceLater(deviceId: string): void {
    this.presence.schedule(deviceId);
  }

  /** Resolves once the reports received so far are handled and the presence changes among them announced, which may wait for them to hold (tests). */
  async announced(): Promise<void> {
    await this.settled();
    await this.presence.idle();
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
    // Every event is a record of its own (only the latest of a kind is kept over the rate): in order, none
    // held back — up to MAX_EVENTS_WAITING of one device; past that one is dropped (the chain then shows the gap).
    // Those waiting together are logged together: a run per transaction (enqueueEvent).
    if (kind === 'event') {
      const waiting = this.eventsWaiting.get(deviceId) ?? 0;
      if (waiting >= MAX_EVENTS_WAITING) return this.events.overflow(deviceId);
      this.eventsWaiting.set(deviceId, waiting + 1);
      return this.enqueueEvent(deviceId, payload);
    }
    if (!this.reportLimiter.take(deviceId) && !this.confirmsNewConfig(deviceId, kind, payload)) return this.hold(deviceId, kind, payload);
    this.enqueue(deviceId, kind, payload);
  }

  /**
   * A state over the device's rate that confirms a config version it was sent and has not confirmed before
   * is recorded at once: a code waits for that confirmation to be `set`. It cannot flood: a device can only
   * confirm versions the platform published (which the platform paces), each once; everything else it
   * reports stays held to the rate. The state it carries supersedes a state held before it.
   */
  private confirmsNewConfig(deviceId: string, kind: string, payload: Buffer): boolean {
    if (kind !== 'state') return false;
    const sent = this.reissuer.lastSentTo(deviceId)?.version;
    if (sent === undefined || sent <= (this.confirmedPastRate.get(deviceId) ?? 0)) return false;
    const state = readJson(payload, deviceStateMessageSchema);
    const version = state.ok ? state.value.configVersion : undefined;
    if (version === undefined || version > sent || version <= (this.confirmedPastRate.get(deviceId) ?? 0)) return false;
    this.confirmedPastRate.set(deviceId, version);
    this.held.get(deviceId)?.reports.delete('state');
    return true;
  }

  /** A report over the device's rate: kept as the latest of its kind, recorded when the rate allows. */
  private hold(deviceId: string, kind: string, payload: Buffer): void {
    let held = this.held.get(deviceId);
    if (!held) {
      this.options.log.warn({ deviceId }, 'device reports over the rate: only the latest of each kind is recorded');
      const timer = setTimeout(() => this.release(deviceId), this.reportLimiter.waitMs(deviceId));
      timer.unref();
      this.held.set(deviceId, (held = { reports: new Map(), timer }));
    }
    // Deleted first, so the kinds are recorded in the order of their latest reports.
    held.reports.delete(kind);
    held.reports.set(kind, payload);
  }

  private release(deviceId: string): void {
    const held = this.held.get(deviceId);
    if (!held) return;
    for (const [kind, payload] of held.reports) {
      if (!this.reportLimiter.take(deviceId)) {
        held.timer = setTimeout(() => this.release(deviceId), this.reportLimiter.waitMs(deviceId));
        held.timer.unref();
        return;
      }
      held.reports.delete(kind);
      this.enqueue(deviceId, kind, payload);
    }
    this.held.delete(deviceId);
  }

  private enqueue(deviceId: string, kind: string, payload: Buffer): void {
    // Events received after this report are logged after it.
    this.eventRuns.delete(deviceId);
    this.chain(deviceId, kind, () => this.handleReport(deviceId, kind, payload));
  }

  /** An event joins the device's run not yet started, or starts one at the end of its chain. */
  private enqueueEvent(deviceId: string, payload: Buffer): void {
    const waiting = this.eventRuns.get(deviceId);
    if (waiting) return void waiting.push(payload);
    const run = [payload];
    this.eventRuns.set(deviceId, run);
    this.chain(deviceId, 'event', async () => {
      // Events read from the connection together join the run before it starts (an in-process database never yields to the connection).
      await new Promise((resolve) => setImmediate(resolve));
      if (this.eventRuns.get(deviceId) === run) this.eventRuns.delete(deviceId);
      await this.recordEvents(deviceId, run);
    });
  }

  /** A run of one device's events, in order, EVENTS_PER_TRANSACTION at a time: one transaction each. */
  private async recordEvents(deviceId: string, run: Buffer[]): Promise<void> {
    for (let from = 0; from < run.length; from += EVENTS_PER_TRANSACTION) {
      const part = run.slice(from, from + EVENTS_PER_TRANSACTION);
      try {
        await this.events.recordRun(deviceId, part);
      } catch (err) {
        this.options.log.warn({ err, deviceId, events: part.length }, 'device events not recorded');
      } finally {
        const waiting = (this.eventsWaiting.get(deviceId) ?? part.length) - part.length;
        if (waiting > 0) this.eventsWaiting.set(deviceId, waiting);
        else this.eventsWaiting.delete(deviceId);
      }
    }
  }

  private chain(deviceId: string, kind: string, task: () => Promise<void>): void {
    const { log } = this.options;
    const previous = this.chains.get(deviceId) ?? Promise.resolve();
    const next = previous
      .then(task)
      .catch((err: unknown) => log.warn({ err, deviceId, kind }, 'device report not recorded'))
      .finally(() => {
        if (this.chains.get(deviceId) === next) this.chains.delete(deviceId);
      });
    this.chains.set(deviceId, next);
  }

  private async writePresences(reports: (PresenceReport & { n: number })[]): Promise<Map<number, PresenceChange | null>> {
    // Embedded brokers on a shared database: a device online that no instance holds yet is left unclaimed (instance-heartbeat.ts).
    const markUnclaimed = this.options.bus.kind === 'embedded' && !this.options.standaloneBroker;
    const changes = await recordPresences(this.options.db, reports, DEVICE_PRESENCE_SETTLE_S, { markUnclaimed });
    return new Map(reports.map((report, i) => [report.n, changes[i] ?? null]));
  }

  private async handleReport(deviceId: string, kind: string, payload: Buffer): Promise<void> {
    const { db, log } = this.options;
    if (kind === 'presence') {
      const presence = readPresence(payload);
      if (!presence.ok) return void log.warn({ deviceId, problem: presence.problem }, 'device presence dropped');
      const change = await this.presenceWrites.submit({ deviceId, online: presence.value === 'online' });
      if (!change) return void log.info({ deviceId }, 'presence of no provisioned device: ignored');
      if (change.unannounced) this.presence.schedule(deviceId);
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
    box: new SecretBox(app.config.secretsEncryptionKey),
    countEvent: eventCounter(app),
  });
  await runtime.start();
  // A crashed instance sends no Last Will for the devices its embedded broker held: its peers record them offline.
  const bus = app.deviceBus;
  const heartbeat = bus instanceof EmbeddedBus ? new InstanceHeartbeat({ db: app.db, log: app.log.child({ module: 'devices' }), unannounced: (id) => runtime.announceLater(id), held: () => bus.heldDevices() }) : null;
  // An answer to an operation this instance sent is this instance's alone: the other instances are not sent it.
  if (bus instanceof EmbeddedBus) bus.takenHere = (topic, payload) => topic.endsWith('/result') && runtime.relay.takenHere(payload);
  if (heartbeat && bus instanceof EmbeddedBus) {
    await heartbeat.start();
    bus.onHolding = (deviceId, held, at) => heartbeat.holding(deviceId, held, at);
    app.addHook('onClose', async () => heartbeat.stop());
  }
  app.decorate('instanceHeartbeat', heartbeat);
  app.decorate('deviceRuntime', runtime);
  app.decorate('deviceRelay', runtime.relay);
  app.addHook('onClose', async () => runtime.stop());
}

/** latchkey_device_events_total{outcome}: door events logged, repeated, or refused and why; in the app's registry once it has one (the metrics come later). */
function eventCounter(app: FastifyInstance): (outcome: string) => void {
  const counter = new Counter({
    name: 'latchkey_device_events_total',
    help: 'Signed events from doors: logged, repeat (already logged), or refused_<why> (malformed, unknown_device, other_device, signature, schema, replay, overflow)',
    labelNames: ['outcome'],
    registers: [],
  });
  app.addHook('onReady', async () => {
    if (app.hasDecorator('metrics')) app.metrics.registry.registerMetric(counter);
  });
  return (outcome) => counter.inc({ outcome });
}
