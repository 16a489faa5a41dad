import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { LRUCache } from 'lru-cache';
import type { FastifyBaseLogger } from 'fastify';
import { deviceTopic, type DeviceConfig, type DeviceConfigUser, type TimeRule, type UsageRequirements } from '@latchkey/contract';
import type { Db } from '../../../db/client.js';
import type { SecretBox } from '../../../lib/secret-box.js';
import { accessCodesConfig, recordCodesPublished, withoutCodeHashes } from '../../access-codes/access-codes.service.js';
import type { PlatformCa } from '../../../plugins/platform-ca.js';
import type { DeviceBus } from '../../../plugins/mqtt/bus.js';

/**
 * A device decides alone from its config: the lock's unlock time and usage requirements, and who may use
 * it (every active share, and the application's owners as unbounded admins). The config is a JWS signed
 * by the platform CA and published retained (QoS 1) on the device's `…/config`, so the device gets the
 * latest one whenever it connects. It is published again, with a higher version, whenever what it says
 * changes: the lock channel's notices (a change to the lock or its shares, from any write path, on any
 * instance) and a device coming online make this look; a config equal to the one last published from
 * this instance is not sent again. Several instances may each send one: the device ignores an older
 * version, and the same content again changes nothing.
 */

const rowsOf = <T>(result: unknown): T[] => (result as { rows: T[] }).rows;

/** A lock's config without its lockId and version. */
export type DeviceConfigContent = Omit<DeviceConfig, 'lockId' | 'version'>;

const seconds = (value: string | Date | null) => (value === null ? null : Math.floor(new Date(value).getTime() / 1000));

/**
 * Publishes (each a few statements: the lock's config read, compared, and perhaps issued) running at once at
 * most. A reconnect storm asks for one per device coming online: the rest wait their turn here rather than
 * in the database's queue, where the connects' lookups would wait behind all of them.
 */
const PUBLISHES_AT_ONCE = 8;

/** How long "this lock has no provisioned device" is believed before the database is asked again. */
const NO_DEVICE_TTL_MS = 30_000;

export class ConfigPublisher {
  /** The content (without version) last published per lock, as a hash. */
  private readonly published = new LRUCache<string, string>({ max: 50_000 });
  /** Locks known to have no provisioned device: most notices are about these, and cost nothing. */
  private readonly noDevice = new LRUCache<string, true>({ max: 50_000, ttl: NO_DEVICE_TTL_MS });
  /** Per lock: a publish running (forced or not), and whether another notice came in meanwhile. */
  private readonly running = new Map<string, { again: boolean; force: boolean; forcing: boolean }>();
  private stopped = false;
  /** Publishes running now, and those waiting for a turn (PUBLISHES_AT_ONCE). */
  private active = 0;
  private readonly turns: (() => void)[] = [];

  constructor(
    private readonly db: Db,
    private readonly bus: DeviceBus,
    private readonly ca: PlatformCa,
    private readonly log: Pick<FastifyBaseLogger, 'warn' | 'debug'>,
    /** Opens the lock's access codes, which its config carries as salted hashes. */
    private readonly box: SecretBox,
  ) {}

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
    this.schedule(lockId, force || !(this.fresh?.(lockId) ?? false));
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

  /** A turn among the PUBLISHES_AT_ONCE publishes that may run; → the call that ends it. */
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
  private schedule(lockId: string, force: boolean): void {
    const current = this.running.get(lockId);
    if (current) {
      if (force && current.forcing) return;
      current.again = true;
      current.force ||= force;
      return;
    }
    const state = { again: false, force, forcing: false };
    this.running.set(lockId, state);
    void (async () => {
      do {
        const forced = state.force;
        state.forcing = forced;
        state.again = false;
        state.force = false;
        if (this.stopped) break;
        const done = await this.turn();
        await this.publish(lockId, forced)
          .catch((err: unknown) => this.log.warn({ err, lockId }, 'device config not published'))
          .finally(done);
      } while (state.again);
      this.running.delete(lockId);
    })();
  }

  private async publish(lockId: string, force: boolean): Promise<void> {
    const [device] = rowsOf<{ id: string; config_hash: string | null }>(
      await this.db.execute(sql`select id, config_hash from lock_devices where lock_id = ${lockId} and provisioned_at is not null`),
    );
    if (!device) {
      this.noDevice.set(lockId, true);
      return;
    }
    const content = await lockConfigContent(this.db, lockId, this.box);
    if (!content) return;
    const hash = createHash('sha256').update(device.id).update(JSON.stringify(withoutCodeHashes(content))).digest('base64url');
    // The hash recorded with the config last published (by any instance, before a restart too) decides.
    if (!force && (device.config_hash ?? this.published.get(lockId)) === hash) return;
    const [bumped] = rowsOf<{ version: number }>(
      await this.db.execute(sql`update lock_devices set config_version = config_version + 1 where id = ${device.id} returning config_version as version`),
    );
    if (!bumped) return;
    // issuedAt is when this config was signed: the device obeys signed operations until issuedAt + offlineGraceSeconds.
    const config: DeviceConfig = { lockId, version: Number(bumped.version), ...content, issuedAt: Math.floor(Date.now() / 1000) };
    await this.bus.publish(deviceTopic(device.id, 'config'), await this.ca.signJws(config), { retain: true });
    this.published.set(lockId, hash);
    const withdrawn = content.accessCodeSalt && content.withdrawnOfflineCodes?.length ? { accessCodeSalt: content.accessCodeSalt, withdrawnOfflineCodes: content.withdrawnOfflineCodes } : null;
    // Unless a newer version went out meanwhile (another instance).
    await this.db.execute(sql`
      update lock_devices set config_issued_at = to_timestamp(${config.issuedAt}), config_grace_seconds = ${config.offlineGraceSeconds ?? null},
        config_hash = ${hash}, config_withdrawn = ${withdrawn === null ? null : JSON.stringify(withdrawn)}::jsonb
      where id = ${device.id} and config_version = ${config.version}`);
    await recordCodesPublished(this.db, lockId, config.version, (content.accessCodes ?? []).map((code) => code.accessCodeId));
    this.log.debug({ lockId, deviceId: device.id, version: config.version }, 'device config published');
  }
}

/**
 * What a lock's config says besides its version (its unlock time, usage requirements, users and access
 * codes, the codes opened with `box` and salted afresh); null when the lock is gone. The one builder of a
 * lock's config: published to a real device, and given to the lock's virtual device in-process
 * (modules/devices/virtual).
 */
export async function lockConfigContent(db: Db, lockId: string, box: SecretBox): Promise<DeviceConfigContent | null> {
  const [lock] = rowsOf<{ application_id: string; unlock_time: number; usage_requirements: UsageRequirements; offline_grace_seconds: number }>(
    await db.execute(sql`select application_id, unlock_time, usage_requirements, offline_grace_seconds from locks where id = ${lockId}`),
  );
  if (!lock) return null;
  const [shares, owners, codes] = await Promise.all([
    db.execute(sql`
      select s.user_id, s.role, s.starts_at, s.ends_at, s.time_window from lock_shares s join application_users u on u.id = s.user_id
      where s.lock_id = ${lockId} and (s.ends_at is null or s.ends_at > now())
      order by s.user_id`),
    db.execute(sql`
      select o.user_id, (select k.key_x from certified_keys k where k.user_id = o.user_id order by k.created_at desc limit 1) as key_x,
        u.certified_after
      from application_owners o join users u on u.id = o.user_id where o.application_id = ${lock.application_id} order by o.user_id`),
    accessCodesConfig(db, box, lockId),
  ]);
  // Every share's user, pending ones too: one invited by email who signed in at a tile holds a key and may
  // use the lock before their application's backend claims them, as the platform admits them.
  const users: DeviceConfigUser[] = [
    ...rowsOf<{ user_id: string; key_x: string | null; certified_after: string | Date | null }>(owners).map((o) => ({
      userId: o.user_id,
      publicKey: o.key_x ? Buffer.from(o.key_x, 'base64url').toString('base64') : '',
      role: 'ADMIN' as const,
      start: null,
      end: null,
      // A password reset or change ended the owner's earlier certificates: the device refuses them too.
      ...(o.certified_after === null ? {} : { certifiedAfter: seconds(o.certified_after) }),
    })),
    ...rowsOf<{ user_id: string; role: 'USER' | 'ADMIN'; starts_at: string | null; ends_at: string | null; time_window: TimeRule | null }>(shares).map((s) => ({
      userId: s.user_id,
      // An application user's key is certified without being kept: the device trusts the chain in each operation.
      publicKey: '',
      role: s.role,
      start: seconds(s.starts_at),
      end: seconds(s.ends_at),
      timeWindow: s.time_window ?? null,
    })),
  ];
  return { unlockTime: lock.unlock_time, usageRequirements: lock.usage_requirements ?? {}, users, offlineGraceSeconds: Number(lock.offline_grace_seconds), ...codes };
}
