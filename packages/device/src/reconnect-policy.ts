/** The first wait before connecting again; it doubles with every failure in a row. */
export const RECONNECT_BASE_MS = 1000;
/** The longest wait between two attempts. */
export const RECONNECT_MAX_MS = 60_000;

/**
 * How long a device waits before its next attempt, after `failures` failed attempts in a row (0: the
 * connection has just dropped): exponential up to `maxMs`, with jitter so that devices which lost the broker
 * together do not come back together.
 */
export function reconnectDelayMs(failures: number, baseMs = RECONNECT_BASE_MS, maxMs = RECONNECT_MAX_MS, random: () => number = Math.random): number {
  return Math.min(baseMs * 2 ** failures, maxMs) * (0.5 + random() / 2);
}
