import { DEVICE_REPLAY_WINDOW_S } from '@latchkey/contract';

/** More operations than a lock takes in a replay window; past it the oldest is forgotten first. */
const DEFAULT_MAX_ENTRIES = 10_000;

/**
 * What this lock has already obeyed: an operation's jti (scoped to its issuer) or, without one, its
 * signature, each remembered for the replay window (two minutes). An operation lives at most 60 s plus
 * 5 s of skew, so it cannot outlast its entry. Entries are kept in insertion order, so expired ones are
 * dropped from the front.
 */
export class ReplayCache {
  private readonly seen = new Map<string, number>();
  /** Entries used since the last `takeNew`, for an append-only journal. */
  private added: [string, number][] = [];

  constructor(
    private readonly windowMs = DEVICE_REPLAY_WINDOW_S * 1000,
    private readonly maxEntries = DEFAULT_MAX_ENTRIES,
  ) {}

  /** Whether `key` was used within the window before `nowMs`. */
  has(key: string, nowMs: number): boolean {
    const until = this.seen.get(key);
    return until !== undefined && until > nowMs;
  }

  /** Records a use of `key` at `nowMs`; false when it had already been used within the window. */
  use(key: string, nowMs: number): boolean {
    this.prune(nowMs);
    if (this.has(key, nowMs)) return false;
    this.seen.delete(key);
    if (this.seen.size >= this.maxEntries) this.seen.delete(this.seen.keys().next().value!);
    this.seen.set(key, nowMs + this.windowMs);
    this.added.push([key, nowMs + this.windowMs]);
    return true;
  }

  /** The entries used since the last call (in use order), and forgets that they were new. */
  takeNew(): [string, number][] {
    const added = this.added;
    this.added = [];
    return added;
  }

  /** The live entries as [key, until (epoch ms)], to keep them across a restart. */
  entries(nowMs: number): [string, number][] {
    this.prune(nowMs);
    return [...this.seen];
  }

  /** Takes back entries saved by `entries`; expired ones are dropped. */
  restore(entries: readonly (readonly [string, number])[], nowMs: number): void {
    for (const [key, until] of [...entries].sort((a, b) => a[1] - b[1])) {
      if (typeof key === 'string' && typeof until === 'number' && until > nowMs && !this.seen.has(key)) this.seen.set(key, until);
    }
  }

  get size(): number {
    return this.seen.size;
  }

  private prune(nowMs: number): void {
    for (const [key, until] of this.seen) {
      if (until > nowMs) break;
      this.seen.delete(key);
    }
  }
}
