import type { FastifyBaseLogger } from 'fastify';
import type { Lock, LockLogEntry } from '@latchkey/contract';
import type { Database } from '../db/client.js';

/**
 * The channel migration 0003's triggers NOTIFY on, at commit, for every change to a lock, share or log;
 * the device runtime adds `<applicationId> <lockId> device` when a lock's device reports (modules/devices/runtime).
 */
export const LOCKS_CHANNEL = 'latchkey_locks';

/** What subscribers receive; `data` is already JSON text, encoded once however many listen. */
export interface LiveEvent {
  /** lock: the Lock as it is now; lock-removed: {id}; activity: the LockLogEntry; share: {lockId, userId};
   *  resync: the feed was interrupted and notices may be lost, so read everything again. */
  event: 'lock' | 'lock-removed' | 'activity' | 'share' | 'resync';
  data: string;
}

type Subscriber = (event: LiveEvent) => void;
type NoticeListener = (payload: string) => void;

/** How a notice's rows are read (the modules' services, given in app.ts): null when the row is gone. */
export interface LiveEventReaders {
  lock(lockId: string): Promise<Lock | null>;
  activity(entryId: string): Promise<LockLogEntry | null>;
}

/**
 * Live updates of the sandbox for the portal. One LISTEN per instance; each notice is turned
 * into an event once — reading the changed row only if someone on this instance follows that
 * application — and handed to every subscriber. Every instance gets every notice (Postgres delivers
 * NOTIFY to all listeners; PGlite in-process), so a change made anywhere reaches clients everywhere.
 */
export class LiveEvents {
  private readonly subscribers = new Map<string, Set<Subscriber>>();
  private readonly noticeListeners = new Set<NoticeListener>();
  /** Notices are handled one after another, so events go out in commit order. */
  private queue: Promise<void> = Promise.resolve();
  private stopListening: (() => Promise<void>) | null = null;
  private wasDown = false;

  constructor(
    private readonly database: Pick<Database, 'listen'>,
    private readonly read: LiveEventReaders,
    private readonly log: Pick<FastifyBaseLogger, 'warn'>,
  ) {}

  async start(): Promise<void> {
    this.stopListening = await this.database.listen(LOCKS_CHANNEL, {
      message: (payload) => {
        for (const listener of this.noticeListeners) listener(payload);
        this.queue = this.queue.then(() => this.handle(payload)).catch((err: unknown) => this.log.warn({ err }, 'live event dropped'));
      },
      up: () => {
        if (this.wasDown) this.broadcast({ event: 'resync', data: '{}' });
        this.wasDown = false;
      },
      down: () => {
        this.wasDown = true;
      },
    });
  }

  async stop(): Promise<void> {
    await this.stopListening?.();
    this.stopListening = null;
    this.subscribers.clear();
  }

  /** Follow one application's locks; returns the unsubscribe. */
  subscribe(applicationId: string, subscriber: Subscriber): () => void {
    let set = this.subscribers.get(applicationId);
    if (!set) this.subscribers.set(applicationId, (set = new Set()));
    set.add(subscriber);
    return () => {
      set.delete(subscriber);
      if (set.size === 0 && this.subscribers.get(applicationId) === set) this.subscribers.delete(applicationId);
    };
  }

  /**
   * Every notice as it arrives (`<applicationId> <lockId> <what> [rowId]`), whoever follows: the device
   * runtime re-publishes a lock's config on a change to its settings or shares, with no LISTEN of its own.
   * The listener must not throw; returns the removal.
   */
  onNotice(listener: NoticeListener): () => void {
    this.noticeListeners.add(listener);
    return () => this.noticeListeners.delete(listener);
  }

  /** How many clients follow on this instance (tests, metrics). */
  get size(): number {
    let n = 0;
    for (const set of this.subscribers.values()) n += set.size;
    return n;
  }

  private async handle(payload: string): Promise<void> {
    const [applicationId, lockId, what, rowId] = payload.split(' ');
    if (!applicationId || !lockId || !this.subscribers.has(applicationId)) return;
    const event = await this.eventOf(lockId, what, rowId);
    if (!event) return;
    for (const subscriber of this.subscribers.get(applicationId) ?? []) subscriber(event);
  }

  private async eventOf(lockId: string, what: string | undefined, rowId: string | undefined): Promise<LiveEvent | null> {
    switch (what) {
      // A lock's device changed (presence, state): the lock as it is now, device summary and state included.
      case 'device':
      case 'lock': {
        const lock = await this.read.lock(lockId);
        return lock ? { event: 'lock', data: JSON.stringify(lock) } : { event: 'lock-removed', data: JSON.stringify({ id: lockId }) };
      }
      case 'activity': {
        const entry = rowId ? await this.read.activity(rowId) : null;
        return entry ? { event: 'activity', data: JSON.stringify(entry) } : null;
      }
      case 'share':
        return { event: 'share', data: JSON.stringify({ lockId, userId: rowId ?? null }) };
      default:
        return null;
    }
  }

  private broadcast(event: LiveEvent): void {
    for (const set of this.subscribers.values()) for (const subscriber of set) subscriber(event);
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The sandbox's change feed for server-sent events (plugins/live-events.ts). */
    liveEvents: LiveEvents;
  }
}
