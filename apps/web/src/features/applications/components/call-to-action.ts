import { DEFAULT_CALL_TO_ACTION, type CallToAction } from '@latchkey/contract';

/**
 * The call-to-action toggle. Off puts the current one aside and clears it; on brings back the
 * one put aside, or the default when there is none. The default's button leads to the application's own
 * support contact, never to Latchkey's: without one the target is left for the owner to fill.
 */
export function toggleCallToAction(
  on: boolean,
  current: CallToAction | null,
  stored: CallToAction | null,
  supportContact: string | null = null,
): { next: CallToAction | null; stored: CallToAction | null } {
  if (!on) return { next: null, stored: current ?? stored };
  return { next: stored ?? { ...DEFAULT_CALL_TO_ACTION, actionTarget: supportContact?.trim() ?? '' }, stored: null };
}
