import { sql } from 'drizzle-orm';
import type { DeviceStateMessage } from '@latchkey/contract';
import type { Db } from '../../../db/client.js';
import { publishEvent } from '../../../lib/webhook-outbox.js';
import { LOCKS_CHANNEL } from '../../../plugins/live-events.js';

/**
 * What a device's reports change in the database: presence (connected, last seen) and state (locked,
 * firmware, local endpoints). Only a provisioned device bound to a lock is heard; an unknown or
 * unprovisioned id changes nothing. Each change also tells the lock's live view (a `device` notice on the
 * lock channel, at commit), and a presence change is announced to webhooks (device.online/offline).
 */

const rowsOf = <T>(result: unknown): T[] => (result as { rows: T[] }).rows;

/** The lock channel's notice for a device change, as SQL: `<applicationId> <lockId> device`. */
const notifyDevice = (applicationId: string, lockId: string) =>
  sql`select pg_notify(${LOCKS_CHANNEL}, ${`${applicationId} ${lockId} device`})`;

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
 * Records a device's presence. Concurrent reports of one device are taken one at a time (the row lock),
 * so of several instances hearing the same message exactly one sees it as a change. A change after a quiet
 * spell (none within `settleS`) is announced to webhooks at once; one that comes sooner is left
 * `unannounced`, for `announcePresence` once the presence has held — so a flapping device is announced
 * twice at most, however often it flaps.
 */
export async function recordPresence(db: Db, deviceId: string, online: boolean, settleS: number): Promise<PresenceChange | null> {
  return db.transaction(async (tx) => {
    const [row] = rowsOf<AnnouncedDevice & { was: boolean; config_version: number; announced: boolean; quiet: boolean }>(
      await tx.execute(sql`
        with before as (
          select d.id, d.lock_id, d.connected, d.config_version, d.presence_announced, d.presence_changed_at from lock_devices d
          where d.id = ${deviceId} and d.provisioned_at is not null for update
        ), changed as (
          update lock_devices d set connected = ${online}, last_seen = now(),
            presence_changed_at = case when b.connected is distinct from ${online} then now() else d.presence_changed_at end
          from before b where d.id = b.id returning d.id
        )
        select b.lock_id, l.application_id, l.name as lock_name, b.connected as was, b.config_version, b.presence_announced as announced,
          (b.presence_changed_at is null or b.presence_changed_at <= now() - make_interval(secs => ${settleS})) as quiet
        from before b join locks l on l.id = b.lock_id join changed c on c.id = b.id`),
    );
    if (!row) return null;
    const changed = row.was !== online;
    await tx.execute(notifyDevice(row.application_id, row.lock_id));
    let announced = row.announced;
    if (changed && row.quiet && announced !== online) {
      await tx.execute(sql`update lock_devices set presence_announced = ${online} where id = ${deviceId}`);
      await announce(tx as unknown as Db, row, deviceId, online);
      announced = online;
    }
    return { lockId: row.lock_id, applicationId: row.application_id, changed, neverConfigured: row.config_version === 0, unannounced: announced !== online };
  });
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
 * announced (the service was down, not the devices): what webhooks were told is reset with it.
 */
export async function markAllOffline(db: Db): Promise<void> {
  await db.execute(sql`update lock_devices set connected = false, presence_announced = false where connected or presence_announced`);
}
