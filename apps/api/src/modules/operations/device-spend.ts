import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { GroupCommit } from '../../lib/group-commit.js';
import type { LockUser } from '../../plugins/lock-user-auth.js';
import type { LockAccess } from './devices.service.js';
import type { VerifiedOperation } from '../../lib/operation-outcome.js';
import { STANDING_COLUMNS, standingHolds, standingOf, type Standing } from './standing.js';

/**
 * spent: the id is spent and the device may be asked; replayed: the id was spent before; offline: the
 * lock's device is not connected (nothing spent); stale: the caller's standing, or the lock's device,
 * is no longer the one checked (nothing spent: read it afresh).
 */
export type DeviceSpendOutcome = 'spent' | 'replayed' | 'offline' | 'stale';

type Item = Standing & { device_id: string };

/**
 * A device-backed lock's operation has its id spent before it is handed to the device, so a replay is
 * refused here and never reaches the lock — if the caller's standing still holds (`standingHolds`), the
 * lock's device is still the one it was checked with, and that device is connected. Spends arriving
 * together are one statement and one commit (lib/group-commit.ts), as the sandbox's unlocks are.
 */
export class DeviceSpendBatcher {
  private readonly queue: GroupCommit<Item, DeviceSpendOutcome>;

  constructor(private readonly db: Db) {
    this.queue = new GroupCommit((items) => this.write(items), { missing: 'stale', key: (item) => item.use_key });
  }

  submit(user: LockUser, access: LockAccess & { device: { id: string } }, verified: VerifiedOperation): Promise<DeviceSpendOutcome> {
    return this.queue.submit({ ...standingOf(user, access, verified), device_id: access.device.id });
  }

  private async write(items: (Item & { n: number })[]): Promise<Map<number, DeviceSpendOutcome>> {
    const result = await this.db.execute(sql`
      with input as (
        select * from jsonb_to_recordset(${JSON.stringify(items)}::jsonb) as t(${sql.raw(STANDING_COLUMNS)}, device_id uuid)
      ), admitted as (
        select i.n, i.use_key, i.remember_until, d.connected
        from input i join locks l on l.id = i.lock_id
          join lock_devices d on d.lock_id = l.id and d.id = i.device_id and d.provisioned_at is not null
        where ${sql.raw(standingHolds)}
      ), spent as (
        insert into used_operation_ids (id, expires_at) select use_key, remember_until from admitted where connected
        on conflict do nothing returning id
      )
      select i.n, a.n is not null as admitted, coalesce(a.connected, false) as connected, s.id is not null as fresh
      from input i left join admitted a on a.n = i.n left join spent s on s.id = i.use_key`);
    const rows = (result as unknown as { rows: { n: number; admitted: boolean; connected: boolean; fresh: boolean }[] }).rows;
    return new Map(
      rows.map((r) => [Number(r.n), !r.admitted ? 'stale' : !r.connected ? 'offline' : r.fresh ? 'spent' : 'replayed'] as const),
    );
  }
}
