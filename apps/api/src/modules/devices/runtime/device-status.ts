import { sql } from 'drizzle-orm';
import type { DeviceStateMessage } from '@latchkey/contract';
import type { Db } from '../../../db/client.js';
import { publishEvent, publishEventsSql } from '../../../lib/webhook-outbox.js';
import { LOCKS_CHANNEL } from '../../../plugins/live-events.js';

/**
 * What a device's reports change in the database: presence (connected, last seen) and state (locked,
 * firmware, local endpoints). Only a provisioned device bound to a lock is heard; an unknown or
 * unprovisioned id changes nothing. Each change also tells the lock's live view (a `device` notice on the
 * lock channel, at commit), and a presence change is announced to webhooks (device.online/offline).
 */

const rowsOf = <T>(result: unknown): T[] => (result as { rows: T[] }).rows;

export interface PresenceChange {
  lockId: string;
  applicationId: string;
  /** The presence before this message: a message that repeats it changes only last_seen. */
  changed: boolean;
  /** No config was ever published to this device. */
  neverConfigured: boolean;
  /** The presence differs from what webhooks were told, and is to be announced once it has held (`announcePresence`). */
  unannounced: boolean;
}

interface AnnouncedDevice {
  lock_id: string;
  application_id: string;
  lock_name: string;
}

const announce = (tx: Db, row: AnnouncedDevice, deviceId: string, online: boolean) =>
  publishEvent(tx, row.application_id, online ? 'device.online' : 'device.offline', {
    applicationId: row.application_id,
    lockId: row.lock_id,
    lockName: row.lock_name,
    deviceId,
  });

/**
 * The instance recorded as holding a device's connection (device_connections) while none has claimed it: the
 * device was recorded online before the instance whose broker holds it wrote its holding, or that broker let
 * it go and neither its Last Will nor another broker's claim is recorded yet. Its `since` is when it was left
 * so, by the database's clock. A holding written replaces it; one left unclaimed for long is a crash's
 * (instance-heartbeat.ts).
 */
export const UNCLAIMED = '';

/** A presence report: the device and what it said. */
export interface PresenceReport {
  deviceId: string;
  online: boolean;
}

/** The presence changes of `reported` announced now, as webhook deliveries of `type`. */
const announceReported = (type: 'device.online' | 'device.offline', online: boolean) =>
  sql.raw(
    publishEventsSql(
      type,
      `select application_id, jsonb_build_object('applicationId', application_id, 'lockId', lock_id, 'lockName', lock_name, 'deviceId', id) as data
       from reported where announce_now and online = ${online} order by n`,
    ),
  );

export interface PresenceOptions {
  /**
   * The presences were heard through embedded brokers whose instances record which of them holds each device
   * (several instances on one PostgreSQL database). A device recorded online that no instance holds yet is
   * recorded UNCLAIMED in the same statement: the instance that records a presence is not always the one
   * whose broker holds the device (every instance hears it through the bridge), and that one may crash
   * before it writes its holding. With an external broker its Last Will says when a device goes.
   */
  markUnclaimed?: boolean;
}

/** The devices of `reported` now online that no instance holds, recorded UNCLAIMED since now (epoch ms). */
const unclaimedOnline = sql`, unclaimed as (
        insert into device_connections (device_id, instance_id, since)
        select r.id, ${UNCLAIMED}, (extract(epoch from now()) * 1000)::bigint from reported r where r.online
        on conflict (device_id) do nothing returning 1
      )`;

/**
 * Records a device's presence. Concurrent reports of one device are taken one at a time (the row lock),
 * so of several instances hearing the same message exactly one sees it as a change. A change after a quiet
 * spell (none within `settleS`) is announced to webhooks at once; one that comes sooner is left
 * `unannounced`, for `announcePresence` once the presence has held — so a flapping device is announced
 * twice at most, however often it flaps.
 */
export async function recordPresence(db: Db, deviceId: string, online: boolean, settleS: number, options: PresenceOptions = {}): Promise<PresenceChange | null> {
  return (await recordPresences(db, [{ deviceId, online }], settleS, options))[0] ?? null;
}

/**
 * recordPresence for several devices in one statement (one report of each at most), the rows locked in
 * the order of their ids: → each report's change, in the order given (null: no provisioned device). Each
 * device's lock channel notice and webhook delivery is its own, as with one statement per report.
 */
export async function recordPresences(db: Db, reports: PresenceReport[], settleS: number, { markUnclaimed = false }: PresenceOptions = {}): Promise<(PresenceChange | null)[]> {
  if (reports.length === 0) return [];
  const input = reports.map((report, n) => ({ n, device_id: report.deviceId, online: report.online }));
  const rows = rowsOf<AnnouncedDevice & { n: number; was: boolean; config_version: number; announced: boolean }>(
    await db.execute(sql`
      with input as (
        select * from jsonb_to_recordset(${JSON.stringify(input)}::jsonb) as t(n int, device_id uuid, online boolean)
      ), before as (
        select d.id, d.lock_id, d.connected, d.config_version, d.presence_announced, d.presence_changed_at from lock_devices d
        where d.id in (select device_id from input) and d.provisioned_at is not null order by d.id for update
      ), decided as (
        select b.*, i.n, i.online, l.application_id, l.name as lock_name,
          b.connected is distinct from i.online
            and (b.presence_changed_at is null or b.presence_changed_at <= now() - make_interval(secs => ${settleS}))
            and b.presence_announced is distinct from i.online as announce_now
        from before b join input i on i.device_id = b.id join locks l on l.id = b.lock_id
      ), reported as (
        update lock_devices d set connected = x.online, last_seen = now(),
          presence_changed_at = case when x.connected is distinct from x.online then now() else d.presence_changed_at end,
          presence_announced = case when x.announce_now then x.online else d.presence_announced end
        from decided x where d.id = x.id
        returning x.n, x.id, x.lock_id, x.application_id, x.lock_name, x.online, x.connected as was, x.config_version,
          d.presence_announced as announced, x.announce_now
      ), online as (
        ${announceReported('device.online', true)} returning 1
      ), offline as (
        ${announceReported('device.offline', false)} returning 1
      )${markUnclaimed ? unclaimedOnline : sql``}
      select r.n, r.lock_id, r.application_id, r.lock_name, r.was, r.config_version, r.announced,
        pg_notify(${LOCKS_CHANNEL}, r.application_id || ' ' || r.lock_id || ' device') as notified
      from reported r order by r.n`),
  );
  const changes: (PresenceChange | null)[] = reports.map(() => null);
  for (const row of rows) {
    const { online } = reports[Number(row.n)]!;
    changes[Number(row.n)] = {
      lockId: row.lock_id,
      applicationId: row.application_id,
      changed: row.was !== online,
      neverConfigured: Number(row.config_version) === 0,
      unannounced: row.announced !== online,
    };
  }
  return changes;
}

/**
 * Announces a device's presence to webhooks once it has held `settleS` since its last change, if it differs
 * from what was announced. Answers 0 when there is nothing left to do, or the milliseconds to wait before
 * asking again (the presence changed since). Safe on every instance at once: the row lock decides.
 */
export async function announcePresence(db: Db, deviceId: string, settleS: number): Promise<number> {
  return db.transaction(async (tx) => {
    const [row] = rowsOf<AnnouncedDevice & { connected: boolean; announced: boolean; wait_ms: number }>(
      await tx.execute(sql`
        select d.connected, d.presence_announced as announced, d.lock_id, l.application_id, l.name as lock_name,
          greatest(0, ceil(extract(epoch from (coalesce(d.presence_changed_at, now()) + make_interval(secs => ${settleS}) - now())) * 1000))::float8 as wait_ms
        from lock_devices d join locks l on l.id = d.lock_id
        where d.id = ${deviceId} and d.provisioned_at is not null for update of d`),
    );
    if (!row || row.connected === row.announced) return 0;
    if (Number(row.wait_ms) > 0) return Number(row.wait_ms);
    await tx.execute(sql`update lock_devices set presence_announced = ${row.connected} where id = ${deviceId}`);
    await announce(tx as unknown as Db, row, deviceId, row.connected);
    return 0;
  });
}

/**
 * Records a device's state report. A report equal to the one held apart from its time (several instances
 * hearing it through an external broker; the report that follows an operation's answer, which recorded
 * the same state already) writes nothing and tells nobody. The config version it says it holds is kept as
 * its highest (never above the version published to it): the access codes that version carries are `set`.
 */
export async function recordState(db: Db, deviceId: string, report: DeviceStateMessage): Promise<boolean> {
  const state = { locked: report.locked, at: report.at, ...(report.directAccessEndpoints ? { directAccessEndpoints: report.directAccessEndpoints } : {}) };
  const acked = sql`least(coalesce(${report.configVersion ?? null}::int, 0), d.config_version)`;
  const rows = rowsOf<{ n: string }>(
    await db.execute(sql`
      with changed as (
        update lock_devices d set state = ${JSON.stringify(state)}::jsonb, firmware = ${report.firmware}, last_seen = now(),
          config_acked_version = greatest(d.config_acked_version, ${acked})
        where d.id = ${deviceId} and d.provisioned_at is not null
          and ((d.state - 'at') is distinct from (${JSON.stringify(state)}::jsonb - 'at') or d.firmware is distinct from ${report.firmware}
            or ${acked} > d.config_acked_version)
        returning d.lock_id
      )
      select pg_notify(${LOCKS_CHANNEL}, l.application_id || ' ' || l.id || ' device') as n from changed c join locks l on l.id = c.lock_id`),
  );
  return rows.length > 0;
}

/**
 * The embedded broker starts with no device connected and no retained presence: whatever the database
 * says about presence is from before, so every device is offline until it connects again. That is not
 * announced (the service was down, not the devices): what webhooks were told is reset with it. Nor does
 * the instance before this one hold any device now: its holdings go too, or the heartbeat would take it
 * for a crashed peer and record each of its devices offline again, while they reconnect (instance-heartbeat.ts).
 */
export async function markAllOffline(db: Db): Promise<void> {
  await db.execute(sql`update lock_devices set connected = false, presence_announced = false where connected or presence_announced`);
  await db.execute(sql`delete from device_connections`);
}
