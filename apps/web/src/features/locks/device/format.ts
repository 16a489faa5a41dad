import { dateLocale } from '../../../lib/dates';

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['day', 86_400],
  ['hour', 3_600],
  ['minute', 60],
];

/** How long ago, in the reader's language through Intl: "now", "5 minutes ago", "vor 2 Stunden". */
export function formatAgo(epochSeconds: number, nowMs: number, language: string): string {
  const ago = Math.max(0, Math.round(nowMs / 1000 - epochSeconds));
  const format = new Intl.RelativeTimeFormat(dateLocale(language), { numeric: 'auto' });
  for (const [unit, seconds] of UNITS) if (ago >= seconds) return format.format(-Math.floor(ago / seconds), unit);
  // Under ten seconds reads as "now": a device's messages are seconds apart anyway.
  return format.format(ago < 10 ? 0 : -ago, 'second');
}

/** Minutes and seconds left, as a countdown reads: 14:05, 0:09. */
export function formatCountdown(secondsLeft: number): string {
  const s = Math.max(0, Math.floor(secondsLeft));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}
