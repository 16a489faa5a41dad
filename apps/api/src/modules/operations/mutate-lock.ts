import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import type { ActivityActor } from '../activity/activity.service.js';
import type { LockUser } from '../../plugins/lock-user-auth.js';
import type { LockAccess } from './devices.service.js';
import type { VerifiedOperation } from './operation-token.js';
import { publishEventsSql } from '../../lib/webhook-outbox.js';

/** Each accepted unlock announced to the application's webhooks (lock.unlocked), in the same statement. */
const announceUnlocks = sql.raw(
  publishEventsSql(
    'lock.unlocked',
    `select lock_application_id as application_id, jsonb_build_object('applicationId', lock_application_id, 'lockId', lock_id, 'lockName', lock_name,
       'userId', user_id, 'email', email, 'duration', seconds) as data from fresh where not locked`,
  ),
);

export type MutateLockOutcome = 'done' | 'replayed' | 'stale';

/** One MUTATE_LOCK, with the standing its rules were checked against. */
interface Item {
  n: number;
  use_key: string;
  remember_until: string;
  lock_id: string;
  user_id: string;
  portal: boolean;
  application_id: string | null;
  role: string | null;
  starts_at: string | null;
  ends_at: string | null;
  time_window: unknown;
  requirements: unknown;
  /** The lock's permitted addresses the caller was checked against. */
  permitted: string[];
  duration: number | null;
  locked: boolean;
  email: string | null;
  display_name: string | null;
}

interface Pending {
  item: Item;
  resolve: (outcome: MutateLockOutcome) => void;
  reject: (error: unknown) => void;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const MAX_BATCH = 512;

/**
 * MUTATE_LOCK, the hot path. Each operation's id is spent, its lock opened or closed, and the accepted
 * entry appended to the lock's log (the columns recordActivity writes; the activity trigger announces
 * it the same way) — only if the caller's standing is still the one its rules were checked against: the
 * same share (role, bounds, window) or ownership, the same usage requirements and permitted addresses, and
 * still no device of its own (a device-backed lock is the device's to open: operations.service.ts relays
 * it). An answer taken from
 * this instance's cache therefore never outlives a revoke committed anywhere: the statement finds the
 * standing changed, answers 'stale', and the caller reads it afresh.
 *
 * Operations arriving together are written together (group commit): one statement and one commit for
 * all that queued while the previous one ran. A durable commit waits for the disk (an fdatasync of a
 * couple of milliseconds here), so one per operation capped the service at a few hundred unlocks/s.
 */
export class MutateLockBatcher {
  private queue: Pending[] = [];
  private running = false;
  private counter = 0;

  constructor(private readonly db: Db) {}

  submit(user: LockUser, access: LockAccess, verified: VerifiedOperation, actor: ActivityActor): Promise<MutateLockOutcome> {
    const { operation } = verified;
    if (operation.type !== 'MUTATE_LOCK') throw new Error('MUTATE_LOCK operations only');
    const portal = user.kind === 'portal';
    const item: Item = {
      n: ++this.counter,
      use_key: verified.useKey,
      remember_until: iso(verified.rememberUntil)!,
      lock_id: access.lock.id,
      user_id: user.id,
      portal,
      application_id: user.applicationId,
      role: portal ? null : access.role,
      starts_at: iso(access.terms.start),
      ends_at: iso(access.terms.end),
      time_window: access.terms.timeWindow,
      requirements: access.lock.usageRequirements,
      permitted: access.lock.permittedAddresses,
      duration: operation.duration ?? null,
      locked: operation.locked,
      email: actor.email,
      display_name: actor.displayName,
    };
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  /** Writes what has queued, batch after batch, until the queue is empty; one statement in flight at a time. */
  private async drain(): Promise<void> {
    this.running = true;
    // Let the requests already parsed in this turn of the event loop join the first batch.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.queue.length > 0) {
      const batch: Pending[] = [];
      const keys = new Set<string>();
      const later: Pending[] = [];
      // The same operation twice in one batch: the second waits for the next, where it finds its id spent.
      for (const pending of this.queue) {
        if (batch.length < MAX_BATCH && !keys.has(pending.item.use_key)) {
          keys.add(pending.item.use_key);
          batch.push(pending);
        } else later.push(pending);
      }
      this.queue = later;
      try {
        const outcomes = await this.write(batch.map((p) => p.item));
        for (const p of batch) p.resolve(outcomes.get(p.item.n) ?? 'stale');
      } catch (error) {
        for (const p of batch) p.reject(error);
      }
    }
    this.running = false;
  }

  private async write(items: Item[]): Promise<Map<number, MutateLockOutcome>> {
    const result = await this.db.execute(sql`
      with input as (
        select * from jsonb_to_recordset(${JSON.stringify(items)}::jsonb) as t(
          n int, use_key text, remember_until timestamptz, lock_id uuid, user_id uuid, portal boolean, application_id uuid, role text,
          starts_at timestamptz, ends_at timestamptz, time_window jsonb, requirements jsonb, permitted jsonb, duration int, locked boolean, email text, display_name text)
      ), admitted as (
        select i.*, l.application_id as lock_application_id, l.name as lock_name, coalesce(i.duration, l.unlock_time) as seconds
        from input i join locks l on l.id = i.lock_id
        where l.usage_requirements = i.requirements and l.permitted_addresses = i.permitted
          and not exists (select 1 from lock_devices d where d.lock_id = l.id and d.provisioned_at is not null) and (
          (i.portal and exists (select 1 from application_owners o where o.application_id = l.application_id and o.user_id = i.user_id))
          or (not i.portal and l.application_id = i.application_id and exists (
            select 1 from lock_shares s where s.lock_id = l.id and s.user_id = i.user_id and s.role = i.role
              and s.starts_at is not distinct from i.starts_at and s.ends_at is not distinct from i.ends_at
              and s.time_window is not distinct from i.time_window)))
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
        insert into lock_activity (lock_id, application_id, type, actor_user_id, actor_email, actor_display_name, subject)
        select lock_id, lock_application_id, case when locked then 'LOCK' else 'UNLOCK' end, user_id, email, display_name,
          case when locked then null else seconds || ' s' end
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
