import { describe, expect, it } from 'vitest';
import { Histogram, Registry } from 'prom-client';
import { RequestDurations } from './request-durations.js';

describe('RequestDurations', () => {
  it('reads out exactly as prom-client’s own histogram of the same observations', async () => {
    const buckets = [0.005, 0.01, 0.1, 1];
    const ours = new Registry();
    const theirs = new Registry();
    const lean = new RequestDurations('d', 'help', buckets);
    ours.registerMetric(lean as unknown as Parameters<Registry['registerMetric']>[0]);
    const reference = new Histogram({ name: 'd', help: 'help', labelNames: ['route', 'method'], buckets, registers: [theirs] });
    const observations: [string, string, number][] = [
      ['/a', 'GET', 0.001],
      ['/a', 'GET', 0.005],
      ['/a', 'GET', 0.0051],
      ['/a', 'POST', 0.5],
      ['/b', 'GET', 3],
      ['/a', 'GET', 0.09],
    ];
    for (const [route, method, seconds] of observations) {
      lean.series({ route, method }).observe(seconds);
      reference.observe({ route, method }, seconds);
    }
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });
});
