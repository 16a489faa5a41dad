import { DEFAULT_CALL_TO_ACTION, type CallToAction } from '@latchkey/contract';

/**
 * Spec §4 call-to-action toggle. Off puts the current one aside and clears it; on brings back the
 * one put aside, or the default when there is none.
 */
export function toggleCallToAction(
  on: boolean,
  current: CallToAction | null,
  stored: CallToAction | null,
): { next: CallToAction | null; stored: CallToAction | null } {
  if (!on) return { next: null, stored: current ?? stored };
  return { next: stored ?? { ...DEFAULT_CALL_TO_ACTION }, stored: null };
}
