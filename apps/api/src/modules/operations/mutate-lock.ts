import { sql } from 'drizzle-orm';
import type { AccessMethod } from '@latchkey/contract';
import type { Db } from '../../db/client.js';
import type { ActivityActor } from '../activity/activity.service.js';
import type { LockUser } from '../../plugins/lock-user-auth.js';
import type { LockAccess } from './devices.service.js';
import type { VerifiedOperation } from '../../lib/operation-outcome.js';
import { publishEventsSql } from '../../lib/webhook-outbox.js';
import { GroupCommit } from '../../lib/group-commit.js';
import { STANDING_COLUMNS, standingHolds, standingOf, type Standing } from './standing.js';

/** Each accepted unlock announced to the application's webhooks (lock.unlocked), in the same statement. */
const announceUnlocks = sql.raw(
  publishEventsSql(
    'lock.unlocked',
    `select lock_application_id as application_id, jsonb_build_object('applicationId', lock_application_id, 'lockId', lock_id, 'lockName', lock_name,
       'userId', user_id, 'email', email, 'duration', seconds, 'method', method, 'accessCodeId', null, 'source', 'platform') as data from fresh where not locked`,
  ),
);

export type MutateLockOutcome = 'done' | 'replayed' | 'stale';

/** One MUTATE_LOCK, with the standing its rules were checked against. */
type Item = Standing & {
  duration: number | null;
  locked: boolean;
  email: string | null;
  display_name: string | null;
  /** How the operation came: the portal (console), a tile page (tile), or an application's user (mobile_key). */
  method: AccessMethod;
};

/** How a signed operation through the cloud was made, by who sent it: the portal, a tile page, or an application's own user (an SDK, a phone). */
export function accessMethodOf(user: Pick<LockUser, 'kind' | 'tile'>): AccessMethod {
  if (user.kind === 'portal') return 'console';
  return user.tile ? 'tile' : 'mobile_key';
}

/**
 * MUTATE_LOCK, the hot path. Each operation's id is spent, its lock opened or closed, and the accepted
 * entry appended to the lock's log (the columns recordActivity writes; the activity trigger announces
 * it the same way) — only if the caller's standing is still the one its rules were checked against
 * (`standingHolds`), and the lock still has no device of its own (a device-backed lock is the device's to
 * open: operations.service.ts relays it). An answer taken from this instance's cache therefore never
 * outlives a revoke committed anywhere: the statement finds the standing changed, answers 'stale', and
 * the caller reads it afresh. Operations arriving together are written together (lib/group-commit.ts).
 */
export class MutateLockBatcher {
  private readonly queue: GroupCommit<Item, MutateLockOutcome>;

  constructor(private readonly db: Db) {
    // The same operation twice in one batch: the second waits for the next, where it finds its id spent.
    this.queue = new GroupCommit((items) => this.write(items), { missing: 'stale', key: (item) => item.use_key });
  }

  submit(user: LockUser, access: LockAccess, verified: VerifiedOperation, actor: ActivityActor): Promise<MutateLockOutcome> {
    const { operation } = verified;
    if (operation.type !== 'MUTATE_LOCK') throw new Error('MUTATE_LOCK operations only');
    return this.queue.submit({
      ...standingOf(user, access, verified),
      duration: operation.duration ?? null,
      locked: operation.locked,
      email: actor.email,
      display_name: actor.displayName,
      method: accessMethodOf(user),
    });
  }

  private async write(items: (Item & { n: number })[]): Promise<Map<number, MutateLockOutcome>> {
    const result = await this.db.execute(sql`
      with input as (
        select * from jsonb_to_recordset(${JSON.stringify(items)}::jsonb) as t(${sql.raw(STANDING_COLUMNS)}, duration int, locked boolean, email text, display_name text, method text)
      ), admitted as (
        select i.*, l.application_id as lock_application_id, l.name as lock_name, coalesce(i.duration, l.unlock_time) as seconds
        from input i join locks l on l.id = i.lock_id
        where not exists (select 1 from lock_devices d where d.lock_id = l.id and d.provisioned_at is not null) and ${sql.raw(standingHolds)}
          -- A sandbox lock made to look offline takes nothing: the caller reads it afresh and is answered as by a disconnected device.
          and not (l.alarms @> '["offline"]'::jsonb)
      ), spent as (
        insert into used_operation_ids (id, expires_at) select use_key, remember_until from admitted on conflict do nothing returning id
      ), fresh as (
        select a.* from admitted a join spent s on s.id = a.use_key
      ), changed as (
        update locks l set unlocked_until = x.until, updated_at = now()
        from (select distinct on (lock_id) lock_id, case when locked then null else now() + make_interval(secs => seconds) end as until
              from fresh order by lock_id, n desc) x
        where l.id = x.lock_id returning l.id
      ), logged as (
        insert into lock_activity (lock_id, application_id, type, actor_user_id, actor_email, actor_display_name, subject, method)
        select lock_id, lock_application_id, case when locked then 'LOCK' else 'UNLOCK' end, user_id, email, display_name,
          case when locked then null else seconds || ' s' end, method
        from fresh order by n returning id
      ), announced as (
        ${announceUnlocks} returning 1
      )
      select i.n, a.n is not null as admitted, f.n is not null as fresh
      from input i left join admitted a on a.n = i.n left join fresh f on f.n = i.n`);
    const rows = (result as unknown as { rows: { n: number; admitted: boolean; fresh: boolean }[] }).rows;
    return new Map(rows.map((r) => [Number(r.n), r.fresh ? 'done' : r.admitted ? 'replayed' : 'stale']));
  }
}
