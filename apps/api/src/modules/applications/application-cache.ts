/**
 * Per-instance cache of GET /platform/application/{id} bodies, serialized, keyed by the application's
 * version. The version is read in the same statement as the session and ownership check (plugins/auth.ts)
 * and is bumped by every change to the application or its rows, on any instance, so a cached body is
 * served only while the database still holds that version: never stale, and no cross-instance invalidation.
 */
export class ApplicationBodyCache {
  private readonly entries = new Map<string, { version: number; body: string }>();

  constructor(private readonly maxEntries = 10_000) {}

  get(applicationId: string, version: number): string | undefined {
    const entry = this.entries.get(applicationId);
    if (!entry) return undefined;
    if (entry.version !== version) {
      if (entry.version < version) this.entries.delete(applicationId);
      return undefined;
    }
    return entry.body;
  }

  /** Keeps the newest version seen; a slower reader holding an older version does not replace it. */
  set(applicationId: string, version: number, body: string): void {
    const current = this.entries.get(applicationId);
    if (current && current.version > version) return;
    this.entries.delete(applicationId);
    this.entries.set(applicationId, { version, body });
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}
