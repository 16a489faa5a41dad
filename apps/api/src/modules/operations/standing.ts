import type { LockUser } from '../../plugins/lock-user-auth.js';
import type { LockAccess } from './devices.service.js';
import type { VerifiedOperation } from '../../lib/operation-outcome.js';

/**
 * The standing an operation's rules were checked against, as a batched write re-checks it in the database
 * (mutate-lock.ts, device-spend.ts): the caller's share (role, bounds, window) or ownership (and, for an
 * owner, a signing certificate their certifiedAfter has not ended), and the lock's usage requirements and
 * permitted addresses. A standing read from an instance's cache is only ever used
 * to accept when the statement finds it unchanged; otherwise the caller reads it afresh.
 */
export interface Standing {
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
  /** The signing certificate's notBefore: the statement refuses it if the user's certifiedAfter is later. */
  certified_from: string;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function standingOf(user: LockUser, access: LockAccess, verified: VerifiedOperation): Standing {
  const portal = user.kind === 'portal';
  return {
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
    certified_from: iso(verified.certifiedFrom)!,
  };
}

/** A batch's input columns for a Standing (jsonb_to_recordset), numbered by `n`. */
export const STANDING_COLUMNS = `n int, use_key text, remember_until timestamptz, lock_id uuid, user_id uuid, portal boolean, application_id uuid, role text,
  starts_at timestamptz, ends_at timestamptz, time_window jsonb, requirements jsonb, permitted jsonb, certified_from timestamptz`;

/** True while input row `i`'s standing on lock `l` is still the one it was checked against. */
export const standingHolds = `l.usage_requirements = i.requirements and l.permitted_addresses = i.permitted and (
  (i.portal and exists (select 1 from application_owners o where o.application_id = l.application_id and o.user_id = i.user_id)
    and not exists (select 1 from users u where u.id = i.user_id and u.certified_after > i.certified_from))
  or (not i.portal and l.application_id = i.application_id and exists (
    select 1 from lock_shares s where s.lock_id = l.id and s.user_id = i.user_id and s.role = i.role
      and s.starts_at is not distinct from i.starts_at and s.ends_at is not distinct from i.ends_at
      and s.time_window is not distinct from i.time_window)))`;
