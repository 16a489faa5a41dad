/**
 * A Prometheus histogram for what every request records (plugins/metrics.ts), kept as plain counters:
 * an observation is a bucket search and three additions. prom-client's Histogram re-derives its labels'
 * key on every observe (≈ 0.6 µs here), which on the authenticated read was a measurable share of each
 * request. prom-client's registry reads it like its own metrics (`get()`, the same text format).
 */
export class RequestDurations {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly all = new Map<string, Series>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly buckets: readonly number[],
  ) {}

  /** The series of one label set, made on first use; keep it, and `observe` on it. */
  series(labels: Record<string, string>): Series {
    const key = JSON.stringify(labels);
    let found = this.all.get(key);
    if (!found) this.all.set(key, (found = new Series(labels, this.buckets)));
    return found;
  }

  /** What prom-client's registry formats: cumulative `_bucket`s with `le`, `_sum` and `_count`. */
  get() {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const s of this.all.values()) {
      let cumulative = 0;
      this.buckets.forEach((le, i) => {
        cumulative += s.counts[i]!;
        values.push({ labels: { le, ...s.labels }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { le: '+Inf', ...s.labels }, value: s.count, metricName: `${this.name}_bucket` });
      values.push({ labels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: s.labels, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

export class Series {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Record<string, string>,
    private readonly buckets: readonly number[],
  ) {
    this.counts = new Float64Array(buckets.length);
  }

  observe(seconds: number): void {
    const { buckets } = this;
    let i = 0;
    while (i < buckets.length && seconds > buckets[i]!) i++;
    if (i < buckets.length) this.counts[i]!++;
    this.sum += seconds;
    this.count++;
  }
}
