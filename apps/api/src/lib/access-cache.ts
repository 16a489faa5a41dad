import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Database } from '../db/client.js';

/** The channel the database's triggers notify (drizzle/0002_change_notifications.sql). */
const CHANGES_CHANNEL = 'latchkey_changes';

/**
 * The tags entries carry. The prefixes are the ones the triggers put in their notices
 * (drizzle/0002_change_notifications.sql): they must stay the same on both sides.
 */
export const accessTags = {
  session: (id: string) => `s:${id}`,
  user: (id: string) => `u:${id}`,
  application: (id: string) => `a:${id}`,
};

export interface AccessCacheOptions {
  maxEntries?: number;
  /** A notice of our own that has not come back in this long means the feed is stuck. */
  syncTimeoutMs?: number;
  /**
   * How often an instance that is not writing checks its feed with a notice of its own. A connection
   * that died silently (no FIN or RST: a NAT timeout, a partition) is then found within this interval
   * plus the timeout, instead of whenever TCP gives up on it.
   */
  heartbeatMs?: number;
}

interface Entry {
  value: unknown;
  tags: readonly string[];
}

/**
 * Per-instance cache of what authenticated reads look up on every request: whether a session is alive,
 * whether its user owns an application and at which version, and a user's application list.
 *
 * Every entry carries tags — `s:<session>`, `u:<user>`, `a:<application>` — and the database names the
 * tags a committed change touches on the `latchkey_changes` channel (statement triggers on sessions,
 * applications and their owners), so every instance drops what changed, usually within a millisecond of
 * the commit. Three rules keep it from ever holding a stale answer for longer than that:
 * - it answers only while the LISTEN connection is up; losing it drops everything and turns it off;
 * - a reader takes a `mark()` before its query and its `set()` is ignored when anything was dropped
 *   in between, so a read that raced a change cannot store the older state after the change's notice;
 * - a request that writes waits, before its response leaves, for `sync()`: a notification of its own
 *   that comes back after those of every transaction committed before it, its own included, so the next
 *   request to this instance sees the change.
 * Every few seconds it also sends itself such a notice: one that does not come back in time turns the
 * cache off and subscribes afresh, so a LISTEN connection that died without a word is found quickly.
 */
export class AccessCache {
  private live = false;
  private epoch = 0;
  /** Least recently used entries go first; however an entry leaves, its tags are unindexed (dispose). */
  private readonly entries: LRUCache<string, Entry>;
  private readonly keysByTag = new Map<string, Set<string>>();
  private readonly pendingSyncs = new Map<string, () => void>();
  private readonly syncPrefix = `sync:${randomUUID()}:`;
  private syncCounter = 0;
  private stopListening: (() => Promise<void>) | null = null;
  private database: Pick<Database, 'listen' | 'notify'> | null = null;
  private stopped = false;
  private resubscribing = false;
  /** Told the application ids each committed change names (null: every application: a bulk change). */
  private readonly applicationListeners = new Set<(applicationIds: string[] | null) => void>();

  private readonly syncTimeoutMs: number;
  private readonly heartbeatMs: number;
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(options: AccessCacheOptions = {}) {
    this.entries = new LRUCache<string, Entry>({ max: options.maxEntries ?? 50_000, dispose: (entry, key) => this.unindex(key, entry) });
    this.syncTimeoutMs = options.syncTimeoutMs ?? 2000;
    this.heartbeatMs = options.heartbeatMs ?? 5000;
  }

  /** Subscribes to the database's change feed; until it is up, every get() misses. */
  async start(database: Pick<Database, 'listen' | 'notify'>): Promise<void> {
    this.database = database;
    const stop = await database.listen(CHANGES_CHANNEL, {
      message: (payload) => this.onMessage(payload),
      up: () => {
        this.clear();
        this.live = true;
      },
      down: () => {
        this.live = false;
        this.clear();
        this.releaseSyncs();
      },
    });
    if (this.stopped) return void (await stop());
    this.stopListening = stop;
    if (!this.heartbeat) {
      this.heartbeat = setInterval(() => void this.sync(), this.heartbeatMs);
      this.heartbeat.unref();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.heartbeat);
    this.live = false;
    this.clear();
    this.releaseSyncs();
    await this.stopListening?.();
    this.stopListening = null;
  }

  get isLive(): boolean {
    return this.live;
  }

  get size(): number {
    return this.entries.size;
  }

  get<T>(key: string): T | undefined {
    if (!this.live) return undefined;
    return this.entries.get(key)?.value as T | undefined;
  }

  /** Taken before the database read whose answer will be `set()`. */
  mark(): number {
    return this.epoch;
  }

  set(key: string, value: unknown, tags: readonly string[], mark: number): void {
    if (!this.live || mark !== this.epoch) return;
    this.entries.delete(key);
    this.entries.set(key, { value, tags });
    for (const tag of tags) {
      let keys = this.keysByTag.get(tag);
      if (!keys) this.keysByTag.set(tag, (keys = new Set()));
      keys.add(key);
    }
  }

  invalidate(tags: Iterable<string>): void {
    this.epoch++;
    for (const tag of tags) {
      const keys = this.keysByTag.get(tag);
      if (!keys) continue;
      for (const key of [...keys]) this.entries.delete(key);
    }
  }

  clear(): void {
    this.epoch++;
    this.entries.clear();
    this.keysByTag.clear();
  }

  /**
   * Resolves once every change committed before the call has been applied here. Notifications reach a
   * listener in commit order, so our own one coming back means all earlier ones have. Without a live
   * feed nothing is cached, so there is nothing to wait for.
   */
  async sync(): Promise<void> {
    if (!this.live || !this.database) return;
    const payload = `${this.syncPrefix}${++this.syncCounter}`;
    const arrived = new Promise<void>((resolve) => this.pendingSyncs.set(payload, resolve));
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.syncTimeoutMs);
    });
    try {
      await this.database.notify(CHANGES_CHANNEL, payload);
      if ((await Promise.race([arrived, timedOut])) === 'timeout') this.resubscribe();
    } catch {
      this.resubscribe();
    } finally {
      clearTimeout(timer);
      this.pendingSyncs.delete(payload);
    }
  }

  private onMessage(payload: string): void {
    if (payload.startsWith('sync:')) {
      this.pendingSyncs.get(payload)?.();
      return;
    }
    if (payload === '*') this.clear();
    else this.invalidate(payload.split(','));
    if (this.applicationListeners.size === 0) return;
    const applicationIds = payload === '*' ? null : payload.split(',').filter((tag) => tag.startsWith('a:')).map((tag) => tag.slice(2));
    if (applicationIds?.length === 0) return;
    for (const listener of this.applicationListeners) listener(applicationIds);
  }

  /**
   * Calls `listener` after every committed change to an application or its owners, with the ids the change
   * named (null after a bulk change); answers the function that stops it.
   */
  onApplicationChange(listener: (applicationIds: string[] | null) => void): () => void {
    this.applicationListeners.add(listener);
    return () => this.applicationListeners.delete(listener);
  }

  /** The feed did not bring our own notice back: stop answering and subscribe afresh. */
  private resubscribe(): void {
    this.live = false;
    this.clear();
    if (this.resubscribing) return;
    this.resubscribing = true;
    const stopListening = this.stopListening;
    this.stopListening = null;
    void (async () => {
      await stopListening?.().catch(() => {});
      if (!this.stopped && this.database) await this.start(this.database).catch(() => {});
      this.resubscribing = false;
    })();
  }

  private releaseSyncs(): void {
    for (const resolve of this.pendingSyncs.values()) resolve();
    this.pendingSyncs.clear();
  }

  private unindex(key: string, entry: Entry): void {
    for (const tag of entry.tags) {
      const keys = this.keysByTag.get(tag);
      if (!keys) continue;
      keys.delete(key);
      if (keys.size === 0) this.keysByTag.delete(tag);
    }
  }
}
