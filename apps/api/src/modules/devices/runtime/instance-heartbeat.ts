import { randomBytes } from 'node:crypto';
import { sql, type SQL } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import { DEVICE_PRESENCE_SETTLE_S } from '@latchkey/contract';
import type { Db } from '../../../db/client.js';
import { UNCLAIMED, recordPresence, recordPresences, type PresenceChange } from './device-status.js';

/**
 * A device's Last Will is sent by the broker that holds its connection. With the embedded broker that is
 * an instance of the service: when the instance crashes, nobody says its devices went offline, and an
 * unlock for one would wait for an answer that cannot come. So the instances on one database heartbeat
 * (instance_heartbeats, every HEARTBEAT_MS) and record which of them holds each device
 * (device_connections, as their brokers admit and drop devices). Each instance, at each beat, looks for
 * devices held by an instance silent for longer than DEAD_AFTER_S, and records them offline through the
 * same path as a Last Will (device-status.ts: connected false, the lock's live view told, device.offline
 * announced), so an unlock answers 503 at once. A device that reconnected elsewhere meanwhile is held by
 * its new instance and left alone; of several instances sweeping, the row lock lets exactly one record
 * each device.
 *
 * A holding is written a moment after the connect (FLUSH_MS, batched), while the device's presence is recorded
 * on its own path by every instance that hears it through the bridge. An instance that crashed between the two
 * would leave its device recorded online with nothing to sweep. So a presence recorded online where no
 * instance holds the device yet leaves it UNCLAIMED in the same statement (device-status.ts), and a broker
 * that lets a device go leaves it UNCLAIMED rather than unrecorded: the holder's write claims it; its Last
 * Will recorded, or another broker's claim, settles it. One left unclaimed for longer than DEAD_AFTER_S (far
 * longer than a holding takes to be written) lost its broker first, a crash right after the connect or the
 * disconnect, and is recorded offline as a silent instance's device is. The holding itself is not written
 * with the presence: the instance that records the presence may not be the one whose broker holds the device.
 * Only embedded brokers sharing a PostgreSQL database leave devices unclaimed: with an external broker
 * (MQTT_URL) there is no heartbeat and the broker's Last Will covers the service's crash, and an instance
 * alone on the embedded database records every device offline when it starts again.
 */

/** How often an instance says it is alive, and looks for instances that are not. */
export const HEARTBEAT_MS = 2_000;
/** An instance silent for longer than this has crashed; so has the broker of a device left unclaimed this long. */
export const DEAD_AFTER_S = 10;
/** Heartbeats of instances gone for longer than this are removed. */
const FORGET_AFTER_S = 3_600;
/** A dead instance's (or unclaimed) devices recorded offline in one transaction at most. */
const SWEEP_BATCH = 100;
/** Holdings are written together once this long has passed since the first waiting (a reconnect storm is a few statements). */
const FLUSH_MS = 50;

const rowsOf = <T>(result: unknown): T[] => (result as { rows: T[] }).rows;

export interface InstanceHeartbeatOptions {
  db: Db;
  log: Pick<FastifyBaseLogger, 'warn' | 'info' | 'debug'>;
  /** A device recorded offline whose change is still to be announced once it has held (the runtime's PresenceAnnouncer). */
  unannounced?: (deviceId: string) => void;
  /** The devices this instance's broker holds now: claimed again after a silence the peers may have taken for a crash. */
  held?: () => string[];
  everyMs?: number;
  deadAfterS?: number;
}

export class InstanceHeartbeat {
  /** This instance, as its heartbeat and holdings name it. */
  readonly instanceId = randomBytes(8).toString('hex');
  /** Holdings waiting to be written: per device, held or not, and since when (ms). */
  private readonly pending = new Map<string, { held: boolean; at: number }>();
  private flushTimer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  /** The beat running or last run: beats run one after another. */
  private beating: Promise<unknown> = Promise.resolve();
  /** Beats running or waiting to: the timer adds none while there is one. */
  private beats = 0;
  private stopped = false;
  private readonly everyMs: number;
  private readonly deadAfterS: number;

  constructor(private readonly options: InstanceHeartbeatOptions) {
    this.everyMs = options.everyMs ?? HEARTBEAT_MS;
    this.deadAfterS = options.deadAfterS ?? DEAD_AFTER_S;
  }

  /** Says this instance is alive, before its broker admits any device, and beats from then on. */
  async start(): Promise<void> {
    await this.options.db.execute(sql`
      insert into instance_heartbeats (instance_id) values (${this.instanceId})
      on conflict (instance_id) do update set last_seen = now()`);
    this.timer = setInterval(() => {
      if (this.beats === 0) void this.beat();
    }, this.everyMs);
    this.timer.unref();
  }

  /**
   * Stops beating. The holdings are left as they are: a device this instance held reconnects to another
   * (which takes it over), or is recorded offline by the others once this instance has been silent long enough.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    if (this.flushTimer) clearTimeout(this.flushTimer);
    await this.beating;
    await this.flushing;
  }

  /** This instance's broker began (held) or ceased to hold a device's connection, at `at` (epoch ms). */
  holding(deviceId: string, held: boolean, at: number): void {
    this.pending.set(deviceId, { held, at });
    if (this.flushTimer || this.stopped) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      this.flushing = this.flushing.then(() => this.flush());
    }, FLUSH_MS);
    this.flushTimer.unref();
  }

  /** Writes the holdings waiting now, those whose write failed before included; resolves once written (or failed again). */
  async flushed(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    if (this.pending.size > 0) this.flushing = this.flushing.then(() => this.flush());
    await this.flushing;
  }

  /**
   * One beat: alive, and the devices of the instances that are not recorded offline. Resolves with the devices
   * recorded. A beat asked for while one runs starts once it has ended, so it sees what that one recorded.
   */
  beat(): Promise<string[]> {
    this.beats++;
    const run = this.beating.then(() => this.beatOnce()).finally(() => this.beats--);
    this.beating = run;
    return run;
  }

  private async beatOnce(): Promise<string[]> {
    try {
      const [beat] = rowsOf<{ silent: boolean | null }>(
        await this.options.db.execute(sql`
          with before as (select last_seen from instance_heartbeats where instance_id = ${this.instanceId})
          insert into instance_heartbeats (instance_id) values (${this.instanceId})
          on conflict (instance_id) do update set last_seen = now()
          returning (select coalesce(b.last_seen < now() - make_interval(secs => ${this.deadAfterS}), true) from before b) as silent`),
      );
      // Silent long enough for a peer to take it for a crash (the database was out of reach): its devices,
      // still connected here, may have been recorded offline. They are claimed and recorded online again.
      if (beat?.silent !== false) await this.rejoin();
      // A holding not written stays waiting: a device of this instance left unclaimed would be taken for a crash's.
      await this.flushed();
      return await this.sweep();
    } catch (err) {
      this.options.log.warn({ err }, 'instance heartbeat failed');
      return [];
    }
  }

  /** Claims every device this instance's broker holds, and records online any a peer recorded offline. */
  private async rejoin(): Promise<void> {
    const held = this.options.held?.() ?? [];
    if (held.length === 0) return;
    this.options.log.warn({ devices: held.length }, 'this instance was silent: its devices are claimed again');
    const now = Date.now();
    for (const deviceId of held) this.pending.set(deviceId, { held: true, at: now });
    await this.flush();
    for (const deviceId of held) {
      const change = await recordPresence(this.options.db, deviceId, true, DEVICE_PRESENCE_SETTLE_S).catch((err: unknown) => {
        this.options.log.warn({ err, deviceId }, 'device of this instance not recorded online again');
        return null;
      });
      if (change?.unannounced) this.options.unannounced?.(deviceId);
    }
  }

  /**
   * Writes the holdings waiting: one statement for those held, one for those let go. A statement that fails
   * leaves its holdings waiting, for the next beat, unless a newer one of the device came meanwhile.
   */
  private async flush(): Promise<void> {
    const batch = [...this.pending];
    this.pending.clear();
    if (batch.length === 0) return;
    const held = batch.filter(([, h]) => h.held);
    const released = batch.filter(([, h]) => !h.held);
    const rows = (part: typeof batch) => JSON.stringify(part.map(([deviceId, h]) => ({ device_id: deviceId, since: h.at })));
    // Devices are locked (key share) in the order of their ids before their holdings are written, as a
    // presence write and a sweep lock them before they mark or remove theirs: no two wait on each other.
    // Only a later admission takes a device over from another instance: an instance's late write never undoes
    // a newer one's. An unclaimed device is taken whenever.
    await this.write(held, sql`
      insert into device_connections (device_id, instance_id, since)
      select d.id, ${this.instanceId}, h.since
      from jsonb_to_recordset(${rows(held)}::jsonb) as h(device_id uuid, since bigint) join lock_devices d on d.id = h.device_id
      order by d.id for key share of d
      on conflict (device_id) do update set instance_id = excluded.instance_id, since = excluded.since
        where device_connections.instance_id = ${UNCLAIMED} or device_connections.since <= excluded.since`);
    // Let go, a device is unclaimed until its Last Will is recorded or another broker claims it.
    await this.write(released, sql`
      update device_connections c set instance_id = ${UNCLAIMED}, since = (extract(epoch from now()) * 1000)::bigint
      from jsonb_to_recordset(${rows(released)}::jsonb) as r(device_id uuid, since bigint)
      where c.device_id = r.device_id and c.instance_id = ${this.instanceId} and c.since <= r.since`);
    // Let go before its holding was written (a connect and a disconnect in one flush): no row says who held it,
    // so one is made, unclaimed; a broker's claim that comes later takes it over.
    await this.write(released, sql`
      insert into device_connections (device_id, instance_id, since)
      select d.id, ${UNCLAIMED}, (extract(epoch from now()) * 1000)::bigint
      from jsonb_to_recordset(${rows(released)}::jsonb) as r(device_id uuid, since bigint) join lock_devices d on d.id = r.device_id
      order by d.id for key share of d
      on conflict (device_id) do nothing`);
  }

  private async write(part: [string, { held: boolean; at: number }][], statement: SQL): Promise<void> {
    if (part.length === 0) return;
    try {
      await this.options.db.execute(statement);
    } catch (err) {
      this.options.log.warn({ err, devices: part.length }, 'device connections not recorded: tried again at the next beat');
      for (const [deviceId, h] of part) if (!this.pending.has(deviceId)) this.pending.set(deviceId, h);
    }
  }

  /**
   * Records offline the devices held by instances silent for longer than the limit, and those left unclaimed
   * that long; answers their ids. A device this instance's broker holds is never taken: its holding is on its way.
   */
  private async sweep(): Promise<string[]> {
    const { db } = this.options;
    await db.execute(sql`delete from instance_heartbeats where last_seen < now() - make_interval(secs => ${FORGET_AFTER_S})`);
    const found = rowsOf<Orphan>(
      await db.execute(sql`
        select c.device_id, c.instance_id from device_connections c
        where c.instance_id <> ${this.instanceId} and case when c.instance_id = ${UNCLAIMED} then c.since < ${this.unclaimedBefore()}
          else not exists (
            select 1 from instance_heartbeats h where h.instance_id = c.instance_id and h.last_seen > now() - make_interval(secs => ${this.deadAfterS})) end
        order by c.device_id`),
    );
    if (found.length === 0) return [];
    const heldHere = new Set(this.options.held?.() ?? []);
    const orphans = found.filter((orphan) => !heldHere.has(orphan.device_id));
    const recorded: Orphan[] = [];
    for (let from = 0; from < orphans.length; from += SWEEP_BATCH) {
      const batch = orphans.slice(from, from + SWEEP_BATCH);
      try {
        for (const [orphan, change] of await this.recordOffline(batch)) {
          recorded.push(orphan);
          if (change.unannounced) this.options.unannounced?.(orphan.device_id);
        }
      } catch (err) {
        this.options.log.warn({ err, devices: batch.length }, 'devices of a silent instance not recorded offline');
      }
    }
    if (recorded.length > 0) {
      const instances = [...new Set(recorded.map((o) => o.instance_id))].map((id) => (id === UNCLAIMED ? 'unclaimed' : id));
      this.options.log.warn({ devices: recorded.length, instances }, 'devices of an instance that stopped heartbeating, or left unclaimed: recorded offline');
    }
    return recorded.map((o) => o.device_id);
  }

  /** The epoch ms before which a device recorded unclaimed has been so too long. */
  private unclaimedBefore(): SQL {
    return sql`(extract(epoch from now() - make_interval(secs => ${this.deadAfterS})) * 1000)::bigint`;
  }

  /**
   * The devices offline, as their Last Wills would say, those the silent instances still hold or still left
   * unclaimed (row locks: one sweeper wins each; a device claimed or recorded online meanwhile waits for the
   * lock, then finds it done, or is left alone). Only a device recorded connected is recorded offline; the
   * others' rows just go. One transaction for the batch, which on the embedded database holds its only
   * connection, so the connects of a reconnect storm wait for a few of these, not one per device.
   */
  private recordOffline(orphans: Orphan[]): Promise<[Orphan, PresenceChange][]> {
    return this.options.db.transaction(async (tx) => {
      const input = JSON.stringify(orphans);
      // The devices are locked first, in the order of their ids, as a presence write or a holding locks them
      // before it marks or claims theirs: each waits for the other, none for each other.
      const devices = rowsOf<{ id: string; connected: boolean }>(
        await tx.execute(sql`
          select d.id, d.connected from lock_devices d
          where d.id in (select o.device_id from jsonb_to_recordset(${input}::jsonb) as o(device_id uuid, instance_id text))
          order by d.id for update of d`),
      );
      const connected = new Set(devices.filter((row) => row.connected).map((row) => row.id));
      const gone = rowsOf<Orphan>(
        await tx.execute(sql`
          delete from device_connections c using jsonb_to_recordset(${input}::jsonb) as o(device_id uuid, instance_id text)
          where c.device_id = o.device_id and c.instance_id = o.instance_id and (c.instance_id <> ${UNCLAIMED} or c.since < ${this.unclaimedBefore()})
          returning c.device_id, c.instance_id`),
      ).filter((row) => connected.has(row.device_id));
      const changes = await recordPresences(tx as unknown as Db, gone.map((row) => ({ deviceId: row.device_id, online: false })), DEVICE_PRESENCE_SETTLE_S);
      return gone.flatMap((row, i): [Orphan, PresenceChange][] => (changes[i] ? [[row, changes[i]]] : []));
    });
  }
}

/** A device's connection recorded under an instance gone silent, or unclaimed. */
interface Orphan {
  device_id: string;
  instance_id: string;
}
