import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../../../db/client.js';
import { announcePresence } from './device-status.js';

/**
 * How often one device's reports reach the database: a token bucket per device (`burst` at once, then
 * `perMinute`). A report over the rate is held, not lost: the latest of each kind is recorded once the
 * rate allows, so a flood costs at most the rate in writes and the record still ends on the last report.
 */
export class ReportLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly burst: number,
    private readonly perMinute: number,
  ) {}

  /** Now, in milliseconds (a method, so a test can hold the clock still). */
  clock(): number {
    return Date.now();
  }

  /** Takes a token for one report of the device; false when it is over its rate. */
  take(deviceId: string): boolean {
    const bucket = this.refilled(deviceId);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  /** Milliseconds until the device has a token again. */
  waitMs(deviceId: string): number {
    const bucket = this.refilled(deviceId);
    return bucket.tokens >= 1 ? 0 : Math.ceil(((1 - bucket.tokens) * 60_000) / this.perMinute);
  }

  /** Forgets the devices whose bucket is full again (they are as if never seen). */
  prune(): void {
    for (const deviceId of [...this.buckets.keys()]) if (this.refilled(deviceId).tokens >= this.burst) this.buckets.delete(deviceId);
  }

  private refilled(deviceId: string): { tokens: number; at: number } {
    const now = this.clock();
    let bucket = this.buckets.get(deviceId);
    if (!bucket) this.buckets.set(deviceId, (bucket = { tokens: this.burst, at: now }));
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) * this.perMinute) / 60_000);
    bucket.at = now;
    return bucket;
  }
}

/**
 * Announces presence changes that were left unannounced (a change soon after another) once they have held,
 * one timer per device. Every instance that hears a report may set one: the database decides who announces.
 */
export class PresenceAnnouncer {
  private readonly waiting = new Map<string, { timer: NodeJS.Timeout; done: Promise<void>; settle: () => void }>();
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly settleS: number,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** Looks at the device's presence again after `delayMs` (by default the settle time), unless a look is due already. */
  schedule(deviceId: string, delayMs = this.settleS * 1000): void {
    if (this.stopped || this.waiting.has(deviceId)) return;
    let settle!: () => void;
    const done = new Promise<void>((resolve) => (settle = resolve));
    const timer = setTimeout(() => {
      announcePresence(this.db, deviceId, this.settleS).then(
        (again) => {
          this.waiting.delete(deviceId);
          if (again > 0) this.schedule(deviceId, again);
          settle();
        },
        (err: unknown) => {
          this.waiting.delete(deviceId);
          this.log.warn({ err, deviceId }, 'device presence not announced');
          settle();
        },
      );
    }, delayMs);
    timer.unref();
    this.waiting.set(deviceId, { timer, done, settle });
  }

  /** Resolves once no announcement is waiting (tests). */
  async idle(): Promise<void> {
    while (this.waiting.size > 0) await Promise.all([...this.waiting.values()].map((entry) => entry.done));
  }

  stop(): void {
    this.stopped = true;
    for (const entry of this.waiting.values()) {
      clearTimeout(entry.timer);
      entry.settle();
    }
    this.waiting.clear();
  }
}
