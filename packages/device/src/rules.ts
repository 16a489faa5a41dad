import { checkTimeRules, ruleProblem, type DeviceConfigUser, type RuleProblem } from '@latchkey/contract';

/**
 * What the lock checks of a config user beyond its own rules (those are the contract's usage-rules.ts,
 * which the platform applies too). Answers null when met, or the problem: its reason's catalogue key and message.
 */

/** A config user's bounds (epoch seconds, null = open; the end is exclusive) and their own time window. */
export function checkUserTerms(user: DeviceConfigUser, atMs: number): RuleProblem | null {
  if (user.start !== null && atMs < user.start * 1000) return ruleProblem('shareNotStarted');
  if (user.end !== null && atMs >= user.end * 1000) return ruleProblem('shareEnded');
  return user.timeWindow ? checkTimeRules([user.timeWindow], atMs, 'shareWindow') : null;
}
