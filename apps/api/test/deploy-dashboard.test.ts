import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * deploy/grafana's dashboard reads the figures as they are reported: a gauge every instance reports for the
 * whole database (the webhook queue, devices online) is taken with max — a sum would count it once per
 * instance. The alert rules' side is promtool's (deploy/prometheus/alerts.test.yml).
 */
const root = path.resolve(import.meta.dirname, '../../..');
const dashboard = JSON.parse(fs.readFileSync(path.join(root, 'deploy/grafana/latchkey-dashboard.json'), 'utf8')) as {
  panels: { title: string; targets?: { expr: string }[] }[];
};
const expressions = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
const DATABASE_WIDE = ['latchkey_webhook_queue_depth', 'latchkey_devices_connected'];

describe('the Grafana dashboard', () => {
  it.each(DATABASE_WIDE)('shows %s, aggregated with max (never sum)', (name) => {
    const uses = expressions.filter((e) => e.includes(name));
    expect(uses.length).toBeGreaterThanOrEqual(1);
    for (const expr of uses) {
      expect(expr).not.toMatch(/\bsum\b/);
      expect(expr).toMatch(new RegExp(`\\bmax(\\s+by\\s*\\([^)]*\\))?\\s*\\(\\s*${name}\\b`));
    }
  });
});
