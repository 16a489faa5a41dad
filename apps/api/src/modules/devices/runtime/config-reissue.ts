import { createHash, randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import { DEFAULT_OFFLINE_GRACE_S, DEVICE_TOPIC_ROOT } from '@latchkey/contract';
import type { Db } from '../../../db/client.js';
import type { DeviceBus } from '../../../plugins/mqtt/bus.js';
import { parseDeviceTopic } from './device-messages.js';

/**
 * A device obeys signed operations until its config's `issuedAt + offlineGraceSeconds`; past that it
 * refuses every phone until it gets a newer config. So each connected device is issued its config again
 * well before that: at half its grace, and at least every REISSUE_MAX_INTERVAL_S, whatever the grace.
 *
 * Every instance hears every config published (the retained `…/config` of each device, from any instance),
 * and keeps, per lock, when its device's config is next due; a starting instance reads those the database
 * recorded as published (ConfigPublisher), so a restart does not issue again the configs devices hold. Due times are spread: each lock's falls up to
 * a quarter of its interval early, by a hash of the lock and this instance, so configs signed together
 * (10,000 devices coming online after a restart) are not all due together, and two instances seldom pick
 * the same one — when they do, the device takes the newer version and ignores the other. Due configs are
 * re-signed through a paced queue: at most REISSUES_PER_TICK every TICK_MS. A device that is not connected
 * is not sent one; it gets a fresh config when it comes online (ConfigPublisher.deviceOnline asks `fresh`).
 */

/** However long the grace, a connected device's config is never older than this. */
export const REISSUE_MAX_INTERVAL_S = 6 * 3600;
/** How often the due configs are looked for. */
const TICK_MS = 250;
/** Configs re-signed per tick at most (800 a second): the rest wait for the next tick, in due order. */
export const REISSUES_PER_TICK = 200;
/** A re-issue that has not been heard back (a failed publish) is tried again after this long. */
export const RETRY_S = 60;

/** When a config issued at `issuedAt` with `graceS` is due again, before the spread. */
export function reissueInterval(graceS: number): number {
  return Math.max(1, Math.min(Math.floor(graceS / 2), REISSUE_MAX_INTERVAL_S));
}

/** A share of [0, 1) fixed by the lock and the instance: how early within the spread this lock's config falls due. */
function spreadOf(seed: string, lockId: string): number {
  return createHash('sha256').update(seed).update(lockId).digest().readUInt32BE(0) / 2 ** 32;
}

/** When a config is due again (epoch seconds). */
export function dueAt(issuedAt: number, graceS: number, spread: number): number {
  const interval = reissueInterval(graceS);
  return issuedAt + interval - Math.floor((interval / 4) * spread);
}

interface Held {
  deviceId: string;
  /** Epoch seconds. */
  due: number;
  /** The version of the config the device was last sent. */
  version: number;
  /** What that config withdrew of the offline codes, and the salt of their hashes: a last config keeps them withdrawn. */
  withdrawn?: { accessCodeSalt: string; withdrawnOfflineCodes: unknown[] };
}

export interface ConfigReissuerOptions {
  db: Db;
  bus: Pick<DeviceBus, 'subscribe'>;
  /** Issues a lock's config again (ConfigPublisher.reissue). */
  reissue: (lockId: string) => void;
  log: Pick<FastifyBaseLogger, 'warn' | 'debug'>;
  /** Now in epoch seconds (tests hold the clock). */
  clock?: () => number;
}

export class ConfigReissuer {
  /** Per lock: its device's config, when due. */
  private readonly held = new Map<string, Held>();
  /** Per device: the lock whose config it was last sent (an index into `held`). */
  private readonly lockOfDevice = new Map<string, string>();
  /** Locks whose config is due, waiting their turn. */
  private readonly queue: string[] = [];
  private readonly queued = new Set<string>();
  private readonly seed = randomBytes(8).toString('hex');
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private readonly clock: () => number;

  constructor(private readonly options: ConfigReissuerOptions) {
    this.clock = options.clock ?? (() => Date.now() / 1000);
  }

  async start(): Promise<void> {
    await this.load();
    await this.options.bus.subscribe(`${DEVICE_TOPIC_ROOT}/+/config`, (topic, payload) => this.heard(topic, payload));
    this.timer = setInterval(() => void this.tick(), TICK_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * The configs the devices were last sent, as the database recorded them when they were published
   * (ConfigPublisher): a restarted service knows which are fresh without issuing them again.
   */
  private async load(): Promise<void> {
    const rows = (
      (await this.options.db.execute(sql`
        select id, lock_id, config_version, extract(epoch from config_issued_at)::float8 as issued_at, config_grace_seconds, config_withdrawn
        from lock_devices where provisioned_at is not null and config_issued_at is not null`)) as unknown as {
        rows: { id: string; lock_id: string; config_version: number; issued_at: number; config_grace_seconds: number | null; config_withdrawn: Held['withdrawn'] | null }[];
      }
    ).rows;
    for (const row of rows) {
      this.record(row.id, row.lock_id, {
        lockId: row.lock_id,
        version: Number(row.config_version),
        issuedAt: Math.floor(Number(row.issued_at)),
        offlineGraceSeconds: row.config_grace_seconds ?? DEFAULT_OFFLINE_GRACE_S,
        ...(row.config_withdrawn ? { withdrawn: row.config_withdrawn } : {}),
      });
    }
  }

  /** Whether the lock's device holds a config that is not yet due again. */
  fresh(lockId: string): boolean {
    const held = this.held.get(lockId);
    return held !== undefined && this.clock() < held.due;
  }

  /**
   * For a device coming online: whether the config it holds is still fresh. When it is not, the caller
   * issues one now, and the re-issue timer leaves the lock alone until that config is heard (or RETRY_S
   * passes), so the device is not sent a second one for the same reason.
   */
  freshOrTaken(lockId: string): boolean {
    if (this.fresh(lockId)) return true;
    const held = this.held.get(lockId);
    if (held) held.due = this.clock() + RETRY_S;
    return false;
  }

  /** The lock and the config version a device was last sent; undefined when none is known. */
  lastSentTo(deviceId: string): { lockId: string; version: number; withdrawn?: Held['withdrawn'] } | undefined {
    const lockId = this.lockOfDevice.get(deviceId);
    const held = lockId === undefined ? undefined : this.held.get(lockId);
    if (lockId === undefined || held?.deviceId !== deviceId) return undefined;
    return { lockId, version: held.version, ...(held.withdrawn ? { withdrawn: held.withdrawn } : {}) };
  }

  /** When the lock's device's config is due again (epoch seconds); undefined when none is known. */
  dueOf(lockId: string): number | undefined {
    return this.held.get(lockId)?.due;
  }

  /** Locks whose config is known, and of those how many are waiting in the queue (tests, metrics). */
  get size(): { known: number; queued: number } {
    return { known: this.held.size, queued: this.queue.length };
  }

  /** A config published to a device (by any instance), or its retained config cleared (an unbound device). */
  heard(topic: string, payload: Buffer): void {
    const parsed = parseDeviceTopic(topic);
    if (!parsed) return;
    const claims = readClaims(payload);
    if (!claims) {
      const lockId = this.lockOfDevice.get(parsed.deviceId);
      if (lockId !== undefined && this.held.get(lockId)?.deviceId === parsed.deviceId) this.held.delete(lockId);
      this.lockOfDevice.delete(parsed.deviceId);
      return;
    }
    this.record(parsed.deviceId, claims.lockId, claims);
  }

  private record(deviceId: string, lockId: string, claims: Claims): void {
    const grace = claims.offlineGraceSeconds ?? DEFAULT_OFFLINE_GRACE_S;
    const issuedAt = claims.issuedAt ?? 0;
    const before = this.held.get(lockId);
    if (before && before.deviceId !== deviceId) this.lockOfDevice.delete(before.deviceId);
    this.lockOfDevice.set(deviceId, lockId);
    this.held.set(lockId, { deviceId, due: dueAt(issuedAt, grace, spreadOf(this.seed, lockId)), version: claims.version ?? 0, ...(claims.withdrawn ? { withdrawn: claims.withdrawn } : {}) });
  }

  /** Moves the due configs to the queue, and re-signs the first REISSUES_PER_TICK of the queue's connected devices. */
  async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      const now = this.clock();
      for (const [lockId, held] of this.held) {
        if (held.due > now || this.queued.has(lockId)) continue;
        this.queue.push(lockId);
        this.queued.add(lockId);
      }
      if (this.queue.length === 0) return;
      const batch = this.queue.splice(0, REISSUES_PER_TICK);
      for (const lockId of batch) this.queued.delete(lockId);
      const rows = (
        (await this.options.db.execute(sql`
          select lock_id from lock_devices where provisioned_at is not null and connected
            and lock_id in (${sql.join(batch.map((id) => sql`${id}::uuid`), sql`, `)})`)) as unknown as { rows: { lock_id: string }[] }
      ).rows;
      const connected = new Set(rows.map((row) => row.lock_id));
      for (const lockId of batch) {
        const held = this.held.get(lockId);
        if (!held) continue;
        if (!connected.has(lockId)) {
          // Sent a fresh one when it comes online again.
          this.held.delete(lockId);
          this.lockOfDevice.delete(held.deviceId);
          continue;
        }
        held.due = now + RETRY_S;
        this.options.reissue(lockId);
      }
    } catch (err) {
      this.options.log.warn({ err }, 'device configs not re-issued');
    } finally {
      this.ticking = false;
    }
  }
}

/** What the scheduler keeps of a config. */
interface Claims {
  lockId: string;
  version?: number;
  issuedAt?: number;
  offlineGraceSeconds?: number;
  withdrawn?: Held['withdrawn'];
}

/** What the scheduler reads of a config JWS: unverified, as it is the platform's own, from its own bus. */
function readClaims(payload: Buffer): Claims | null {
  if (payload.length === 0) return null;
  try {
    const claims = JSON.parse(Buffer.from(payload.toString().split('.')[1] ?? '', 'base64url').toString()) as Record<string, unknown>;
    if (typeof claims.lockId !== 'string') return null;
    return {
      lockId: claims.lockId,
      ...(typeof claims.version === 'number' ? { version: claims.version } : {}),
      ...(typeof claims.issuedAt === 'number' ? { issuedAt: claims.issuedAt } : {}),
      ...(typeof claims.offlineGraceSeconds === 'number' ? { offlineGraceSeconds: claims.offlineGraceSeconds } : {}),
      ...(typeof claims.accessCodeSalt === 'string' && Array.isArray(claims.withdrawnOfflineCodes) && claims.withdrawnOfflineCodes.length > 0
        ? { withdrawn: { accessCodeSalt: claims.accessCodeSalt, withdrawnOfflineCodes: claims.withdrawnOfflineCodes as unknown[] } }
        : {}),
    };
  } catch {
    return null;
  }
}
