import { checkTimeRules, operationErrors, type DeviceConfigUser } from '@latchkey/contract';

/**
 * What the lock checks of a config user beyond its own rules (those are the contract's usage-rules.ts,
 * which the platform applies too). Answers null when met, or the reason it was not.
 */

/** A config user's bounds (epoch seconds, null = open; the end is exclusive) and their own time window. */
export function checkUserTerms(user: DeviceConfigUser, atMs: number): string | null {
  if (user.start !== null && atMs < user.start * 1000) return operationErrors.shareNotStarted;
  if (user.end !== null && atMs >= user.end * 1000) return operationErrors.shareEnded;
  return user.timeWindow ? checkTimeRules([user.timeWindow], atMs, operationErrors.shareWindow) : null;
}
