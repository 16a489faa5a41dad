import type { ReplayCache } from './replay-cache.js';
import type { StateDir } from './state-dir.js';

/**
 * The replay cache on disk: a snapshot (`replay.json`, every live entry, written to a temporary name and
 * renamed) and a journal (`replay.log`, one `[key, until]` line per operation used since the snapshot,
 * appended). A save appends only what is new — a few lines, not the whole cache of up to 10,000 entries
 * rewritten for every burst — and once the journal holds more lines than the cache has entries, the next
 * save writes a fresh snapshot and starts the journal again. A crash between the two leaves both, and
 * loading takes their union; a line cut short by a power cut is skipped.
 */
export class ReplayStore {
  /** Lines in the journal since the last snapshot; Infinity: write a snapshot next (an append failed). */
  private journalLines = Infinity;

  constructor(
    private readonly state: StateDir,
    private readonly cache: ReplayCache,
  ) {}

  /** Restores the cache from the snapshot and the journal. */
  async load(nowMs: number): Promise<void> {
    const snapshot = await this.state.read('replay');
    if (snapshot) this.cache.restore(JSON.parse(snapshot) as [string, number][], nowMs);
    const journal = await this.state.read('replayJournal');
    const lines = journal ? journal.split('\n').filter(Boolean) : [];
    const entries: [string, number][] = [];
    for (const line of lines) {
      try {
        entries.push(JSON.parse(line) as [string, number]);
      } catch {
        // A line the last write did not finish: its operation never got an answer.
      }
    }
    this.cache.restore(entries, nowMs);
    this.cache.takeNew();
    this.journalLines = lines.length;
  }

  /** Puts what the cache used since the last save on disk. */
  async save(nowMs: number): Promise<void> {
    const added = this.cache.takeNew();
    if (this.journalLines + added.length > Math.max(this.cache.size, 1_000)) {
      this.journalLines = Infinity;
      await this.state.write('replay', JSON.stringify(this.cache.entries(nowMs)), 0o600);
      await this.state.remove('replayJournal');
      this.journalLines = 0;
      return;
    }
    if (added.length === 0) return;
    const lines = added.map((entry) => `${JSON.stringify(entry)}\n`).join('');
    try {
      await this.state.append('replayJournal', lines, 0o600);
      this.journalLines += added.length;
    } catch (error) {
      this.journalLines = Infinity;
      throw error;
    }
  }
}
