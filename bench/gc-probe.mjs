// Preloaded into a process the memory bench measures (`node --expose-gc --import ./bench/gc-probe.mjs …`),
// never into the service as shipped: on SIGUSR2 the process collects its garbage and writes its memory split
// to GC_PROBE_FILE (JSON: rss, heapUsed, heapTotal, external, arrayBuffers, v8 heap statistics). The bench
// asks by signal, so no route is added to the service.
import fs from 'node:fs';
import v8 from 'node:v8';

const file = process.env.GC_PROBE_FILE;
if (file && typeof globalThis.gc === 'function') {
  process.on('SIGUSR2', () => {
    globalThis.gc();
    globalThis.gc();
    const m = process.memoryUsage();
    const h = v8.getHeapStatistics();
    const out = { at: Date.now(), ...m, v8UsedHeap: h.used_heap_size, v8TotalHeap: h.total_heap_size, mallocedMemory: h.malloced_memory, externalMemory: h.external_memory };
    fs.writeFileSync(`${file}.tmp`, JSON.stringify(out));
    fs.renameSync(`${file}.tmp`, file);
  });
}
