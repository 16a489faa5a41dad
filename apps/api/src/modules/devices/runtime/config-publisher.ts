import { sql } from 'drizzle-orm';
import { LRUCache } from 'lru-cache';
import type { FastifyBaseLogger } from 'fastify';
import { deviceTopic, type DeviceConfig } from '@latchkey/contract';
import type { Db } from '../../../db/client.js';
import { GroupCommit } from '../../../lib/group-commit.js';
import type { SecretBox } from '../../../lib/secret-box.js';
import { recordCodesPublished } from '../../access-codes/access-codes.service.js';
import type { PlatformCa } from '../../../plugins/platform-ca.js';
import type { DeviceBus } from '../../../plugins/mqtt/bus.js';
import { configHash, deviceConfigs, type DeviceConfigContent, type DeviceConfigRead } from './config-content.js';

/**
 * A device decides alone from its config: the lock's unlock time and usage requirements, and who may use
 * it (every active share, and the application's owners as unbounded admins). The config is a JWS signed
 * by the platform CA and published retained (QoS 1) on the device's `…/config`, so the device gets the
 * latest one whenever it connects. It is published again, with a higher version, whenever what it says
 * changes: the lock channel's notices (a change to the lock or its shares, from any write path, on any
 * instance) and a device coming online make this look; a config equal to the one last published from
 * this instance is not sent again. Several instances may each send one: the device ignores an older
 * version, and the same content again changes nothing.
 *
 * The configs of locks looked at together (a fleet coming online after a restart, a batch of re-issues, an
 * application's locks) are read together (config-content.ts) and compared in memory: only those that
 * changed, or must be issued anyway, go on to be signed and published.
 */

const rowsOf = <T>(result: unknown): T[] => (result as { rows: T[] }).rows;

/**
 * Configs issued at once at most (each a few statements: the version bumped, the config signed, published
 * and recorded). Many falling due together wait their turn here rather than in the database's queue, where
 * the devices' connect lookups would wait behind all of them.
 */
export const PUBLISHES_AT_ONCE = 8;

/** Locks whose configs are read in one go at most: those asked for meanwhile are read in the next. */
const READS_AT_ONCE = 500;

/**
 * A device coming online within this long of another has its config checked with the others that come in
 * the next ONLINE_GATHER_MS: a fleet back after a restart arrives a few devices at a time, and checked one
 * by one each would cost the whole read. A device coming online alone is checked at once.
 */
const ONLINE_GATHER_MS = 1000;

/** How long "this lock has no provisioned device" is believed before the database is asked again. */
const NO_DEVICE_TTL_MS = 30_000;

export class ConfigPublisher {
  /** The content (without version) last published per lock, as a hash. */
  private readonly published = new LRUCache<string, string>({ max: 50_000 });
  /** Locks known to have no provisioned device: most notices are about these, and cost nothing. */
  private readonly noDevice = new LRUCache<string, true>({ max: 50_000, ttl: NO_DEVICE_TTL_MS });
  /** Per lock: a publish running (forced or not), and whether another notice came in meanwhile. */
  private readonly running = new Map<string, RunState>();
  private stopped = false;
  /** Configs being issued now, and those waiting for a turn (PUBLISHES_AT_ONCE). */
  private active = 0;
  private readonly turns: (() => void)[] = [];
  /**
   * The configs asked for while a read runs are read together in the next: one statement per input for all
   * of them (config-content.ts), and one read in flight at a time. → the lock's device and config, or null
   * when the lock has no provisioned device.
   */
  private readonly reads: GroupCommit<{ lockId: string }, DeviceConfigRead | null>;
  /** When a device last came online (ms), and the wait of the checks gathering meanwhile. */
  private lastOnline = Number.NEGATIVE_INFINITY;
  private gathering: Promise<void> | null = null;

  constructor(
    private readonly db: Db,
    private readonly bus: DeviceBus,
    private readonly ca: PlatformCa,
    private readonly log: Pick<FastifyBaseLogger, 'warn' | 'debug'>,
    /** Opens the lock's access codes, which its config carries as salted hashes. */
    box: SecretBox,
  ) {
    this.reads = new GroupCommit(
      async (items) => {
        const read = await deviceConfigs(db, items.map((item) => item.lockId), box);
        return new Map(items.map((item) => [item.n, read.get(item.lockId) ?? null]));
      },
      { missing: null, key: (item) => item.lockId, maxBatch: READS_AT_ONCE },
    );
  }

  /** A notice on the lock channel: `<applicationId> <lockId> <what> [rowId]`. */
  onNotice(payload: string): void {
    const [, lockId, what] = payload.split(' ');
    // `device` notices are the runtime's own (presence, state): they change nothing a config says.
    if (!lockId || (what !== 'lock' && what !== 'share' && what !== 'access_code')) return;
    if (this.noDevice.has(lockId)) return;
    this.schedule(lockId, false);
  }

  /**
   * An application or its owners changed (owners are every lock's admins in a config): the configs of its
   * locks that have a device are built again, and sent where they differ. null: every application.
   */
  async applicationChanged(applicationIds: string[] | null): Promise<void> {
    const rows = rowsOf<{ lock_id: string }>(
      await this.db.execute(
      applicationIds
        ? sql`select d.lock_id from lock_devices d join locks l on l.id = d.lock_id
              where d.provisioned_at is not null and l.application_id in (${sql.join(applicationIds.map((id) => sql`${id}::uuid`), sql`, `)})`
        : sql`select lock_id from lock_devices where provisioned_at is not null`,
      ),
    );
    for (const { lock_id } of rows) this.schedule(lock_id, false);
  }

  /**
   * Whether the config a lock's device holds is still far from lapsing (config-reissue.ts); without it, or
   * answering false, a device coming online is sent a freshly issued config even when nothing else changed.
   */
  fresh: ((lockId: string) => boolean) | null = null;

  /** The lock's device came online, or was never sent a config: look now, even if nothing seems changed. */
  deviceOnline(lockId: string, force: boolean): void {
    this.noDevice.delete(lockId);
    const now = Date.now();
    const gather = !force && now - this.lastOnline < ONLINE_GATHER_MS;
    this.lastOnline = now;
    this.schedule(lockId, force || !(this.fresh?.(lockId) ?? false), gather);
  }

  /** Issues the lock's device its config again, with a new issuedAt, though nothing in it changed. */
  reissue(lockId: string): void {
    this.schedule(lockId, true);
  }

  stop(): void {
    this.stopped = true;
  }

  /** Resolves once no publish is running or waiting (tests). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await new Promise((resolve) => setTimeout(resolve, 5));
  }

  /** Resolves at the end of the current gathering window (ONLINE_GATHER_MS), opening one if none is open. */
  private gathered(): Promise<void> {
    this.gathering ??= new Promise<void>((resolve) =>
      setTimeout(() => {
        this.gathering = null;
        resolve();
      }, ONLINE_GATHER_MS),
    );
    return this.gathering;
  }

  /** A turn among the PUBLISHES_AT_ONCE configs that may be issued at once; → the call that ends it. */
  private async turn(): Promise<() => void> {
    if (this.active < PUBLISHES_AT_ONCE) this.active++;
    else await new Promise<void>((resolve) => this.turns.push(resolve));
    // Ended, the turn passes to the next waiting, if any.
    return () => {
      const next = this.turns.shift();
      if (next) next();
      else this.active--;
    };
  }

  /**
   * One publish per lock at a time; notices meanwhile make one more run after it, not one each. A forced
   * run issues a config signed now whatever else happens: a re-issue asked for meanwhile is served by it
   * (a device coming online and its config falling due together are sent one config, not two).
   */
  private schedule(lockId: string, force: boolean, gather = false): void {
    const current = this.running.get(lockId);
    if (current) {
      if (force && current.forcing) return;
      current.again = true;
      current.force ||= force;
      return;
    }
    const state: RunState = { again: false, force, forcing: false };
    this.running.set(lockId, state);
    void (async () => {
      // The first run of a device come online in a storm waits for the others of its window; runs after it do not.
      if (gather) await this.gathered();
      do {
        const forced = state.force;
        state.forcing = forced;
        state.again = false;
        state.force = false;
        if (this.stopped) break;
        await this.publish(lockId, forced, state).catch((err: unknown) => this.log.warn({ err, lockId }, 'device config not published'));
      } while (state.again);
      this.running.delete(lockId);
    })();
  }

  /**
   * The lock's config read (with the others asked for meanwhile) and compared with the one its device was
   * last sent; issued when it differs or `force`. A change committed after the read is a notice of its own
   * (`state.again`): the run after this one reads it and issues in its place, forced if this one was.
   */
  private async publish(lockId: string, force: boolean, state: RunState): Promise<void> {
    const read = await this.reads.submit({ lockId });
    if (!read) {
      this.noDevice.set(lockId, true);
      return;
    }
    const hash = configHash(read.deviceId, read.content);
    // The hash recorded with the config last published (by any instance, before a restart too) decides.
    if (!force && (read.configHash ?? this.published.get(lockId)) === hash) return;
    const done = await this.turn();
    try {
      if (state.again) state.force ||= force;
      else if (!this.stopped) await this.issue(lockId, read.deviceId, read.content, hash);
    } finally {
      done();
    }
  }

  /** Issues the lock's device this config: a version above the last, signed now, published retained and recorded. */
  private async issue(lockId: string, deviceId: string, content: DeviceConfigContent, hash: string): Promise<void> {
    const [bumped] = rowsOf<{ version: number }>(
      await this.db.execute(sql`update lock_devices set config_version = config_version + 1 where id = ${deviceId} returning config_version as version`),
    );
    if (!bumped) return;
    // issuedAt is when this config was signed: the device obeys signed operations until issuedAt + offlineGraceSeconds.
    const config: DeviceConfig = { lockId, version: Number(bumped.version), ...content, issuedAt: Math.floor(Date.now() / 1000) };
    await this.bus.publish(deviceTopic(deviceId, 'config'), await this.ca.signJws(config), { retain: true });
    this.published.set(lockId, hash);
    const withdrawn = content.accessCodeSalt && content.withdrawnOfflineCodes?.length ? { accessCodeSalt: content.accessCodeSalt, withdrawnOfflineCodes: content.withdrawnOfflineCodes } : null;
    // Unless a newer version went out meanwhile (another instance).
    await this.db.execute(sql`
      update lock_devices set config_issued_at = to_timestamp(${config.issuedAt}), config_grace_seconds = ${config.offlineGraceSeconds ?? null},
        config_hash = ${hash}, config_withdrawn = ${withdrawn === null ? null : JSON.stringify(withdrawn)}::jsonb
      where id = ${deviceId} and config_version = ${config.version}`);
    await recordCodesPublished(this.db, lockId, config.version, (content.accessCodes ?? []).map((code) => code.accessCodeId));
    this.log.debug({ lockId, deviceId, version: config.version }, 'device config published');
  }
}

/** A lock's publish running: whether to run again after it (forced or not), and whether this run is forced. */
interface RunState {
  again: boolean;
  force: boolean;
  forcing: boolean;
}
