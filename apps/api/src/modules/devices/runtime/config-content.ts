import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { isUuid, type DeviceConfig, type DeviceConfigUser, type TimeRule, type UsageRequirements } from '@latchkey/contract';
import type { Db } from '../../../db/client.js';
import type { SecretBox } from '../../../lib/secret-box.js';
import { accessCodesConfigs, withoutCodeHashes } from '../../access-codes/access-codes.service.js';

/**
 * The one builder of a lock's config: published to a real device (config-publisher.ts), and given to the
 * lock's virtual device in-process (modules/devices/virtual). Locks read together are read in one statement
 * per input (the locks, their shares, their applications' owners, their access codes), whatever their number:
 * a fleet coming online together has its configs checked in a few statements, not a few per device.
 */

const rowsOf = <T>(result: unknown): T[] => (result as { rows: T[] }).rows;

/** A lock's config without its lockId and version. */
export type DeviceConfigContent = Omit<DeviceConfig, 'lockId' | 'version'>;

/** A lock with a provisioned device: the device, the hash of the config it was last sent, the config now. */
export interface DeviceConfigRead {
  deviceId: string;
  /** Of the config last published to the device (by any instance, before a restart too); null: none recorded. */
  configHash: string | null;
  content: DeviceConfigContent;
}

interface LockRow {
  id: string;
  application_id: string;
  unlock_time: number;
  usage_requirements: UsageRequirements | null;
  offline_grace_seconds: number;
}

const seconds = (value: string | Date | null) => (value === null ? null : Math.floor(new Date(value).getTime() / 1000));
const uuids = (ids: readonly string[]) => sql.join(ids.map((id) => sql`${id}::uuid`), sql`, `);

/**
 * What the config of a device holding `content` is compared by: the device and the content without the
 * access codes' salt and hashes (fresh in every build). Equal hashes, the device holds this config already.
 */
export function configHash(deviceId: string, content: DeviceConfigContent): string {
  return createHash('sha256').update(deviceId).update(JSON.stringify(withoutCodeHashes(content))).digest('base64url');
}

/**
 * What a lock's config says besides its version (its unlock time, usage requirements, users and access
 * codes, the codes opened with `box` and salted afresh); null when the lock is gone.
 */
export async function lockConfigContent(db: Db, lockId: string, box: SecretBox): Promise<DeviceConfigContent | null> {
  const [lock] = rowsOf<LockRow>(
    await db.execute(sql`select id, application_id, unlock_time, usage_requirements, offline_grace_seconds from locks where id = ${lockId}`),
  );
  if (!lock) return null;
  return (await contentsOf(db, [lock], box)).get(lockId) ?? null;
}

/**
 * Of `lockIds`, those with a provisioned device: the device, its recorded config hash and the lock's config
 * now. A lock without one (or gone) is not in the answer, and cost no read beyond the first statement.
 */
export async function deviceConfigs(db: Db, asked: readonly string[], box: SecretBox): Promise<Map<string, DeviceConfigRead>> {
  // Not a lock's id: no lock, and no reason to fail the statement for the others.
  const lockIds = asked.filter(isUuid);
  if (lockIds.length === 0) return new Map();
  const rows = rowsOf<LockRow & { device_id: string; config_hash: string | null }>(
    await db.execute(sql`
      select l.id, l.application_id, l.unlock_time, l.usage_requirements, l.offline_grace_seconds, d.id as device_id, d.config_hash
      from lock_devices d join locks l on l.id = d.lock_id
      where d.lock_id in (${uuids(lockIds)}) and d.provisioned_at is not null`),
  );
  const contents = await contentsOf(db, rows, box);
  const found = new Map<string, DeviceConfigRead>();
  for (const row of rows) {
    const content = contents.get(row.id);
    if (content) found.set(row.id, { deviceId: row.device_id, configHash: row.config_hash, content });
  }
  return found;
}

/** The config content of each of `locks`: their shares, their applications' owners and their codes, one statement each. */
async function contentsOf(db: Db, locks: readonly LockRow[], box: SecretBox): Promise<Map<string, DeviceConfigContent>> {
  if (locks.length === 0) return new Map();
  const lockIds = locks.map((lock) => lock.id);
  const applicationIds = [...new Set(locks.map((lock) => lock.application_id))];
  const [shares, owners, codes] = await Promise.all([
    db.execute(sql`
      select s.lock_id, s.user_id, s.role, s.starts_at, s.ends_at, s.time_window from lock_shares s join application_users u on u.id = s.user_id
      where s.lock_id in (${uuids(lockIds)}) and (s.ends_at is null or s.ends_at > now())
      order by s.lock_id, s.user_id`),
    db.execute(sql`
      select o.application_id, o.user_id, (select k.key_x from certified_keys k where k.user_id = o.user_id order by k.created_at desc limit 1) as key_x,
        u.certified_after
      from application_owners o join users u on u.id = o.user_id where o.application_id in (${uuids(applicationIds)})
      order by o.application_id, o.user_id`),
    accessCodesConfigs(db, box, lockIds),
  ]);
  // Owners are every lock's unbounded admins in a config: the application's, in user order.
  const ownersOf = groupBy(
    rowsOf<{ application_id: string; user_id: string; key_x: string | null; certified_after: string | Date | null }>(owners),
    (o) => o.application_id,
    (o): DeviceConfigUser => ({
      userId: o.user_id,
      publicKey: o.key_x ? Buffer.from(o.key_x, 'base64url').toString('base64') : '',
      role: 'ADMIN' as const,
      start: null,
      end: null,
      // A password reset or change ended the owner's earlier certificates: the device refuses them too.
      ...(o.certified_after === null ? {} : { certifiedAfter: seconds(o.certified_after) }),
    }),
  );
  // Every share's user, pending ones too: one invited by email who signed in at a tile holds a key and may
  // use the lock before their application's backend claims them, as the platform admits them.
  const sharesOf = groupBy(
    rowsOf<{ lock_id: string; user_id: string; role: 'USER' | 'ADMIN'; starts_at: string | null; ends_at: string | null; time_window: TimeRule | null }>(shares),
    (s) => s.lock_id,
    (s): DeviceConfigUser => ({
      userId: s.user_id,
      // An application user's key is certified without being kept: the device trusts the chain in each operation.
      publicKey: '',
      role: s.role,
      start: seconds(s.starts_at),
      end: seconds(s.ends_at),
      timeWindow: s.time_window ?? null,
    }),
  );
  return new Map(
    locks.map((lock) => [
      lock.id,
      {
        unlockTime: lock.unlock_time,
        usageRequirements: lock.usage_requirements ?? {},
        users: [...(ownersOf.get(lock.application_id) ?? []), ...(sharesOf.get(lock.id) ?? [])],
        offlineGraceSeconds: Number(lock.offline_grace_seconds),
        ...codes.get(lock.id),
      },
    ]),
  );
}

/** `rows` as lists by `key`, each row mapped, in the rows' order. */
function groupBy<Row, Value>(rows: readonly Row[], key: (row: Row) => string, value: (row: Row) => Value): Map<string, Value[]> {
  const groups = new Map<string, Value[]>();
  for (const row of rows) {
    const group = groups.get(key(row));
    if (group) group.push(value(row));
    else groups.set(key(row), [value(row)]);
  }
  return groups;
}
