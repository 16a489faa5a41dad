// One autocannon run in a process of its own, so the load generator does not share an event loop with the
// bench that seeds, pairs and prints: reads its options as JSON on stdin, prints its result as JSON on stdout.
// Options are load()'s (bench/lib.mjs) minus functions: `requests` may list plain requests (method, path,
// headers, body) that every connection takes in turn.
import autocannon from 'autocannon';
import { percentile } from './lib.mjs';

let input = '';
for await (const chunk of process.stdin) input += chunk;
const { url, connections, duration, headers, method, body, requests } = JSON.parse(input);

let times = new Float64Array(1 << 20);
let count = 0;
const started = process.cpuUsage();
const instance = autocannon({ url, connections, duration, headers, method, body, requests, pipelining: 1 }, (err, r) => {
  if (err) {
    console.error(err);
    process.exit(1);
  }
  const sorted = times.subarray(0, count).sort();
  const at = (p) => (count ? Number(percentile(sorted, p).toFixed(2)) : null);
  const cpu = process.cpuUsage(started);
  process.stdout.write(
    JSON.stringify({
      rps: r.requests.average,
      total: r.requests.total,
      p50: at(50),
      p99: at(99),
      errors: r.errors,
      non2xx: r.non2xx,
      statusCodes: r.statusCodeStats,
      // The generator's own CPU time (ms): on a 2-core host it competes with the server it measures.
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
    }),
  );
});
instance.on('response', (_client, statusCode, _bytes, responseTimeMs) => {
  if (statusCode < 200 || statusCode > 299) return;
  if (count === times.length) {
    const grown = new Float64Array(times.length * 2);
    grown.set(times);
    times = grown;
  }
  times[count++] = responseTimeMs;
});
