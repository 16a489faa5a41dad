import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { LRUCache } from 'lru-cache';
import { deviceLogReasons, type DeviceConfig, type DeviceConfigUser } from '@latchkey/contract';
import { sql } from 'drizzle-orm';
import { LockController, PlatformTrust, type CodeResult, type LockEvent, type SensorReport } from '@latchkey/device';
import type { Db } from '../../../db/client.js';
import { SecretBox } from '../../../lib/secret-box.js';
import { VirtualOfflineSecrets } from '../../access-codes/offline-secrets.service.js';
import type { LockAccess } from '../../operations/devices.service.js';
import { isVirtuallyOffline } from '../../locks/locks.service.js';
import { OperationRefusal, logTypeOf, refusal, type VerifiedOperation } from '../../../lib/operation-outcome.js';
import type { VirtualDeviceCheck } from '../../operations/operations.service.js';
import { lockConfigContent, logLockEvent, type EventLock } from '../runtime/index.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The sandbox locks' virtual devices: a LockController per lock without a provisioned device. */
    virtualDevices: VirtualDevices;
  }
}

export interface VirtualDevicesOptions {
  db: Db;
  /** The platform CA, shared by every controller, so each user's chain is checked once. */
  trust: PlatformTrust;
  log: Pick<FastifyBaseLogger, 'info' | 'warn'>;
  /** Opens the locks' access codes (their configs carry them as salted hashes, as a device's does). */
  box: SecretBox;
  /** Each virtual lock's offline-code secret, so its keypad takes the lock's offline codes. */
  offlineSecrets: VirtualOfflineSecrets;
  /** Controllers kept at most; the least recently used is closed first. */
  max?: number;
  /** Epoch ms; the tests move it. */
  clock?: () => number;
}

/** One sandbox lock's device, and its config's builds. */
interface VirtualLock {
  readonly controller: LockController;
  /** The lock's application: a change to it or its owners makes the config stale (owners are its admins). */
  readonly applicationId: string;
  /** Built before a change to its application or owners: built again before the next operation. */
  stale: boolean;
  /** The build running; a notice meanwhile makes it build once more before it resolves. */
  building: Promise<void> | null;
  again: boolean;
  /** When the last build started (epoch ms). */
  builtAt: number;
  /** A build put off after a notice about the lock's own row. */
  timer: NodeJS.Timeout | null;
  /** Whether its controller has the lock's offline-code secret yet. */
  hasOfflineSecret: boolean;
}

const DEFAULT_MAX = 10_000;
/**
 * Every unlock rewrites its lock's row, and each write sends the same notice as a change to its settings,
 * so a notice about the row rebuilds the config at most this often; a change to a share rebuilds it at once.
 */
const LOCK_NOTICE_SPACING_MS = 1000;

const seconds = (ms: number | null) => (ms === null ? null : Math.floor(ms / 1000));

/** What a config says that an admission is compared with: its users by id (the first entry of each, as the controller reads them), its rules as JSON. */
interface ConfigIndex {
  users: Map<string, DeviceConfigUser>;
  requirements: string;
}
const indexes = new WeakMap<DeviceConfig, ConfigIndex>();
function indexOf(config: DeviceConfig): ConfigIndex {
  let index = indexes.get(config);
  if (!index) {
    const users = new Map<string, DeviceConfigUser>();
    for (const user of config.users) if (!users.has(user.userId)) users.set(user.userId, user);
    indexes.set(config, (index = { users, requirements: requirementsOf(config.usageRequirements) }));
  }
  return index;
}

const requirementsJson = new WeakMap<object, string>();
/** A lock's usage requirements as JSON, each object stringified once (a cached standing keeps its object). */
function requirementsOf(value: unknown): string {
  if (!value || typeof value !== 'object') return '{}';
  let json = requirementsJson.get(value);
  if (json === undefined) requirementsJson.set(value, (json = JSON.stringify(value)));
  return json;
}

/**
 * The sandbox locks as devices: each lock without a provisioned device is a LockController of
 * @latchkey/device (the code a real lock runs, with a VirtualActuator) in this process, made on first
 * use. An operation the platform admitted is handed to it exactly as signed (`admit`): the controller
 * checks it again from its own config — chain, signature, times, single use, the user's place and role,
 * the lock's rules — and acts; only then does the platform apply it. A refusal is the device's: 403 with
 * its reason, logged as the relay logs a real device's (409 for a replay, as the platform answers one).
 *
 * Its config is the one a real device gets, from the same builder (lockConfigContent), built once per
 * lock and kept: no database read per operation. It is rebuilt when the lock channel says the lock or its
 * shares changed (notices, from any instance), and before an operation whenever its application or owners
 * changed since (an owner's certifiedAfter) or it disagrees with what the platform has just read of the
 * caller's standing or the lock's rules, so no decision rests on a
 * config older than the platform's own read. Idle, it costs nothing: no timers but the unref'd automatic
 * locks, and a notice about a lock with no controller here is ignored.
 *
 * The virtual lock's bolt is this instance's: the lock's row (unlocked_until) stays what the portal shows.
 */
export class VirtualDevices implements VirtualDeviceCheck {
  private readonly locks: LRUCache<string, VirtualLock>;
  private readonly db: Db;
  private readonly trust: PlatformTrust;
  private readonly log: Pick<FastifyBaseLogger, 'info' | 'warn'>;
  private readonly clock: () => number;
  private readonly box: SecretBox;
  private readonly offlineSecrets: VirtualOfflineSecrets;
  private version = 0;
  private closed = false;
  /** The virtual locks' events being logged, in order. */
  private events: Promise<void> = Promise.resolve();

  constructor(options: VirtualDevicesOptions) {
    this.db = options.db;
    this.trust = options.trust;
    this.log = options.log;
    this.clock = options.clock ?? Date.now;
    this.box = options.box;
    this.offlineSecrets = options.offlineSecrets;
    this.locks = new LRUCache<string, VirtualLock>({ max: options.max ?? DEFAULT_MAX, dispose: (entry) => retire(entry) });
  }

  /** Hands an admitted operation to the lock's virtual device; resolves when it did it, throws its refusal. */
  async admit(access: LockAccess, userId: string, verified: VerifiedOperation, jws: string): Promise<void> {
    const lockId = access.lock.id;
    let entry = this.locks.get(lockId);
    if (!entry) {
      entry = this.create(lockId, access.lock.applicationId);
      this.locks.set(lockId, entry);
      await this.rebuild(lockId, entry);
    } else if (entry.building) {
      await entry.building;
    }
    if (entry.stale || !agrees(entry, access, userId)) await this.rebuild(lockId, entry);
    const result = await entry.controller.handle(jws);
    if (result.outcome === 'DONE') return;
    const type = logTypeOf(verified.operation);
    const reason = result.reason?.trim() || deviceLogReasons.noReason;
    if (result.reasonKey === 'replayed') throw refusal('replayed', 409, type);
    this.log.info({ lockId, userId, reason }, 'operation refused by the lock’s virtual device');
    throw new OperationRefusal(403, reason, type, { kind: result.reasonKey ?? 'other', logReason: deviceLogReasons.refused(reason) });
  }

  /**
   * A code typed at the lock's virtual keypad: checked by its controller from a config built now (so a
   * code created or withdrawn a moment ago counts), exactly as a device's keypad checks it, lockout
   * included. The controller emits the keypad's events.
   */
  async enterCode(lockId: string, applicationId: string, code: string): Promise<CodeResult> {
    let entry = this.locks.get(lockId);
    if (!entry) {
      entry = this.create(lockId, applicationId);
      this.locks.set(lockId, entry);
    }
    await this.rebuild(lockId, entry);
    const result = await entry.controller.enterCode(code);
    await this.eventsWritten();
    return result;
  }

  /**
   * What the lock's sensors or alarms report (POST …/simulate/*): the controller makes it an event, as a
   * device's does, and it is logged before this resolves. A door state or battery level equal to the last
   * one reported is no event.
   */
  async report(lockId: string, applicationId: string, sensor: SensorReport): Promise<void> {
    let entry = this.locks.get(lockId);
    if (!entry) {
      entry = this.create(lockId, applicationId);
      this.locks.set(lockId, entry);
    }
    entry.controller.report(sensor, this.clock());
    await this.eventsWritten();
  }

  /** Resolves once every event the virtual locks emitted so far is logged. */
  async eventsWritten(): Promise<void> {
    await this.events;
  }

  /**
   * A virtual lock's event, logged as a device's is (modules/devices/runtime/device-events.ts: its entry,
   * the lock's door / battery / alarms, its webhooks) with no device id and no chain: the controller is in
   * this process. A keypad unlock also opens the sandbox lock's row for its unlock time, as the portal shows it.
   * Events are written one after another, in the order they were emitted.
   */
  private logEvent(lockId: string, event: LockEvent): void {
    this.events = this.events.then(() =>
      this.db
        .transaction(async (tx) => {
          const [lock] = (
            (await tx.execute(sql`
              select id as lock_id, application_id, name as lock_name, unlock_time, door_state, battery, alarms
              from locks where id = ${lockId} for update`)) as unknown as { rows: EventLock[] }
          ).rows;
          if (!lock) return;
          // A sandbox lock made to look offline decides as a door without the platform does: its events say so.
          await logLockEvent(tx, lock, isVirtuallyOffline({ alarms: lock.alarms ?? [] }) ? { ...event, offline: true } : event, null);
          if (event.type === 'unlocked') {
            await tx.execute(sql`update locks set unlocked_until = ${new Date(event.at)}::timestamptz + make_interval(secs => unlock_time), updated_at = now() where id = ${lockId}`);
          }
        })
        .catch((err: unknown) => this.log.warn({ err, lockId, type: event.type }, 'virtual lock event not logged')),
    );
  }

  /** A notice on the lock channel (`<applicationId> <lockId> <what> [rowId]`): a cached lock's config is rebuilt. */
  onNotice(payload: string): void {
    const [, lockId, what] = payload.split(' ');
    if (!lockId || (what !== 'lock' && what !== 'share' && what !== 'access_code')) return;
    const entry = this.locks.peek(lockId);
    if (!entry || this.closed) return;
    if (what === 'share' || what === 'access_code') {
      if (entry.timer) clearTimeout(entry.timer);
      entry.timer = null;
      return this.rebuildInBackground(lockId, entry);
    }
    if (entry.timer) return;
    const wait = entry.builtAt + LOCK_NOTICE_SPACING_MS - this.clock();
    if (wait <= 0) return this.rebuildInBackground(lockId, entry);
    entry.timer = setTimeout(() => {
      entry.timer = null;
      this.rebuildInBackground(lockId, entry);
    }, wait);
    entry.timer.unref();
  }

  /**
   * An application or its owners changed (an owner's certificates ended, an owner added or removed; null:
   * every application): the configs of its locks held here are built again before their next operation.
   * Nothing is read now, however many locks that is.
   */
  applicationChanged(applicationIds: string[] | null): void {
    for (const entry of this.locks.values()) {
      if (applicationIds === null || applicationIds.includes(entry.applicationId)) entry.stale = true;
    }
  }

  /** The lock's virtual device, if this instance has one (tests, status); never makes one. */
  controllerOf(lockId: string): LockController | undefined {
    return this.locks.peek(lockId)?.controller;
  }

  /** How many virtual devices this instance holds. */
  get size(): number {
    return this.locks.size;
  }

  /** Resolves once no config is being built (tests). */
  async idle(): Promise<void> {
    for (;;) {
      const running = [...this.locks.values()].map((entry) => entry.building).filter((p) => p !== null);
      if (running.length === 0) return;
      await Promise.allSettled(running);
    }
  }

  /** Closes every controller (their automatic locks stop) and forgets them. */
  async close(): Promise<void> {
    this.closed = true;
    const controllers = [...this.locks.values()].map((entry) => entry.controller);
    this.locks.clear();
    await Promise.all(controllers.map((controller) => controller.close()));
    await this.events;
  }

  /** A controller with no config yet: until it has one, it refuses everything. */
  private create(lockId: string, applicationId: string): VirtualLock {
    const controller = new LockController({ lockId, platformCa: this.trust, config: null, clock: this.clock });
    controller.on('event', (event) => this.logEvent(lockId, event));
    return { controller, applicationId, stale: false, building: null, again: false, builtAt: 0, timer: null, hasOfflineSecret: false };
  }

  /** Builds the lock's config and gives it to its controller; one build at a time per lock. */
  private rebuild(lockId: string, entry: VirtualLock): Promise<void> {
    if (entry.building) {
      entry.again = true;
      return entry.building;
    }
    entry.building = (async () => {
      try {
        do {
          entry.again = false;
          entry.stale = false;
          entry.builtAt = this.clock();
          const content = await lockConfigContent(this.db, lockId, this.box);
          // The lock is gone: its device with it.
          if (!content) return void (this.locks.peek(lockId) === entry && this.locks.delete(lockId));
          if (!entry.hasOfflineSecret) {
            entry.controller.setOfflineCodeSecret(await this.offlineSecrets.of(lockId));
            entry.hasOfflineSecret = true;
          }
          entry.controller.setConfig({ lockId, version: ++this.version, ...content });
        } while (entry.again && !this.closed);
      } finally {
        entry.building = null;
      }
    })();
    return entry.building;
  }

  private rebuildInBackground(lockId: string, entry: VirtualLock): void {
    this.rebuild(lockId, entry).catch((err: unknown) => this.log.warn({ err, lockId }, 'virtual device config not rebuilt'));
  }

}

/**
 * Whether the config says what the platform has just read: the caller with the same role, bounds, window
 * and certifiedAfter, and the lock with the same usage requirements. The unlock time is left to the notices
 * (it decides nothing, and a standing the platform keeps may carry an older one).
 */
function agrees({ controller }: VirtualLock, access: LockAccess, userId: string): boolean {
  const config = controller.config;
  if (!config) return false;
  const index = indexOf(config);
  const user = index.users.get(userId);
  if (!user || user.role !== access.role) return false;
  if ((user.certifiedAfter ?? null) !== seconds(access.certifiedAfter ?? null)) return false;
  const { terms } = access;
  if (user.start !== seconds(terms.start) || user.end !== seconds(terms.end)) return false;
  const window = user.timeWindow ?? null;
  if ((window === null) !== (terms.timeWindow === null)) return false;
  if (window !== null && JSON.stringify(window) !== JSON.stringify(terms.timeWindow)) return false;
  return index.requirements === requirementsOf(access.lock.usageRequirements);
}

function retire(entry: VirtualLock): void {
  if (entry.timer) clearTimeout(entry.timer);
  entry.timer = null;
  void entry.controller.close();
}

/**
 * Decorates `app.virtualDevices` for the operations routes, rebuilding configs on the lock channel's
 * notices. Register after the platform CA and the live events, before the routes.
 */
export function registerVirtualDevices(app: FastifyInstance): void {
  const box = new SecretBox(app.config.secretsEncryptionKey);
  const devices = new VirtualDevices({
    db: app.db,
    trust: new PlatformTrust(Buffer.from(app.platformCa.certificateBase64, 'base64')),
    log: app.log.child({ module: 'virtual-devices' }),
    box,
    offlineSecrets: new VirtualOfflineSecrets(app.db, box),
  });
  const stopNotices = app.liveEvents.onNotice((payload) => devices.onNotice(payload));
  const stopApplicationNotices = app.accessCache.onApplicationChange((ids) => devices.applicationChanged(ids));
  app.decorate('virtualDevices', devices);
  app.addHook('onClose', async () => {
    stopNotices();
    stopApplicationNotices();
    await devices.close();
  });
}
