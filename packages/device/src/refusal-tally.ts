import { randomUUID } from 'node:crypto';
import { deviceLogReasons, type DeviceResult, type OperationErrorKey } from '@latchkey/contract';

/** Refusals are reported at most this often, one report per reason (the platform coalesces a minute too). */
const REFUSAL_REPORT_MS = 60_000;
/** Distinct reasons kept for one report; refusals for any further reason are counted under a general one. */
const MAX_REASONS = 10;

/**
 * The refusals the lock decided on its own (its local endpoint), counted by reason and reported together:
 * the first refusal starts a window, and when it ends each reason is one result `{outcome: "REFUSED",
 * method: "local", reason, reasonKey?, count}`. A flood of bad operations costs the platform a few writes a minute,
 * not one each, and every refusal is still counted in its log.
 */
export class RefusalTally {
  private readonly counts = new Map<string, { count: number; at: string; locked: boolean; reasonKey?: OperationErrorKey }>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly report: (results: DeviceResult[]) => Promise<void>,
    private readonly windowMs = REFUSAL_REPORT_MS,
  ) {}

  /** Counts a refusal: its reason and, when the lock gave one, the reason's catalogue key. */
  add({ reason = '', reasonKey }: { reason?: string; reasonKey?: OperationErrorKey }, locked: boolean, now = new Date()): void {
    const kept = this.counts.has(reason) || this.counts.size < MAX_REASONS;
    const key = kept ? reason : deviceLogReasons.noReason;
    const entry = this.counts.get(key);
    if (entry) {
      entry.count++;
      entry.locked = locked;
    } else {
      this.counts.set(key, { count: 1, at: now.toISOString(), locked, ...(kept && reasonKey ? { reasonKey } : {}) });
    }
    this.timer ??= setTimeout(() => void this.flush(), this.windowMs);
  }

  /** Reports what is counted now (the window ended, or the device is stopping). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.counts.size === 0) return Promise.resolve();
    const results = [...this.counts].map(
      ([reason, { count, at, locked, reasonKey }]): DeviceResult => ({
        requestId: `local-${randomUUID()}`,
        outcome: 'REFUSED',
        reason: reason.slice(0, 500),
        ...(reasonKey ? { reasonKey } : {}),
        state: { locked },
        method: 'local',
        at,
        count: Math.min(count, 1_000_000),
      }),
    );
    this.counts.clear();
    return this.report(results);
  }
}
