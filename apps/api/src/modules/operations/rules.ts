import { checkTimeRules, ruleProblem, type RuleProblem, type TimeRule } from '@latchkey/contract';

/**
 * What the platform checks of a share beyond the lock's own rules (those are the contract's
 * usage-rules.ts, which the lock applies too): its bounds and window, and what an admin may grant.
 * Each check answers null when met, or the problem: its reason's catalogue key and message.
 */

/** A share's bounds (epoch ms, null = open) and its own time window. */
export interface ShareTerms {
  start: number | null;
  end: number | null;
  timeWindow: TimeRule | null;
}

export function checkShareTerms(terms: ShareTerms, atMs: number): RuleProblem | null {
  if (terms.start !== null && atMs < terms.start) return ruleProblem('shareNotStarted');
  if (terms.end !== null && atMs >= terms.end) return ruleProblem('shareEnded');
  return terms.timeWindow ? checkTimeRules([terms.timeWindow], atMs, 'shareWindow') : null;
}

/**
 * What an admin's ADD_USER may give: nothing beyond the admin's own share. The share it writes
 * (the admin's own included) must end no later than the admin's does — an admin whose access ends in an
 * hour cannot make it, or anyone's, permanent — and it carries the admin's time window when they have
 * one (operation-writes.ts). Owners have open terms, so no bound. Roles cannot widen: only an ADMIN gets
 * here, and ADMIN is the highest. `grantEndMs` null = no end.
 */
export function checkGrant(signer: ShareTerms, toSelf: boolean, grantEndMs: number | null): RuleProblem | null {
  if (signer.end === null) return null;
  if (grantEndMs === null || grantEndMs > signer.end) return ruleProblem(toSelf ? 'shareSelfWiden' : 'shareBeyondOwn');
  return null;
}
