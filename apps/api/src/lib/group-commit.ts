/**
 * Group commit: writes that arrive together are written together — one statement and one commit for all
 * that queued while the previous one ran. A durable commit waits for the disk (an fdatasync of a couple of
 * milliseconds here), and on the embedded database every statement is CPU on the service's own event loop,
 * so one statement per operation capped the service at a few hundred operations/s.
 *
 * `write` receives the batch, each item numbered (`n`), and answers each item's outcome by its number; an
 * item it does not answer gets `missing`. Two items with the same `key` never share a batch: the second
 * waits for the next one, where it finds what the first wrote (a spent id, say).
 */
export class GroupCommit<Item extends object, Outcome> {
  private queue: Pending<Item & { n: number }, Outcome>[] = [];
  private running = false;
  private counter = 0;

  constructor(
    private readonly write: (items: (Item & { n: number })[]) => Promise<Map<number, Outcome>>,
    private readonly options: { missing: Outcome; key?: (item: Item) => string; maxBatch?: number },
  ) {}

  submit(item: Item): Promise<Outcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item: { ...item, n: ++this.counter }, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  /** Writes what has queued, batch after batch, until the queue is empty; one statement in flight at a time. */
  private async drain(): Promise<void> {
    this.running = true;
    // Let the requests already parsed in this turn of the event loop join the first batch.
    await new Promise((resolve) => setImmediate(resolve));
    const { key, missing, maxBatch = 512 } = this.options;
    while (this.queue.length > 0) {
      const batch: typeof this.queue = [];
      const keys = new Set<string>();
      const later: typeof this.queue = [];
      for (const pending of this.queue) {
        const k = key?.(pending.item);
        if (batch.length < maxBatch && (k === undefined || !keys.has(k))) {
          if (k !== undefined) keys.add(k);
          batch.push(pending);
        } else later.push(pending);
      }
      this.queue = later;
      try {
        const outcomes = await this.write(batch.map((p) => p.item));
        for (const p of batch) p.resolve(outcomes.has(p.item.n) ? outcomes.get(p.item.n)! : missing);
      } catch (error) {
        for (const p of batch) p.reject(error);
      }
    }
    this.running = false;
  }
}

interface Pending<Item, Outcome> {
  item: Item;
  resolve: (outcome: Outcome) => void;
  reject: (error: unknown) => void;
}
