import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ReplayCache } from './replay-cache.js';
import { ReplayStore } from './replay-store.js';
import { StateDir } from './state-dir.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
function stateDir(): StateDir {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-replay-'));
  dirs.push(dir);
  return new StateDir(dir);
}
/** A fresh cache loaded from what `state` holds, as after a restart. */
async function reloaded(state: StateDir, now: number): Promise<ReplayCache> {
  const cache = new ReplayCache();
  await new ReplayStore(state, cache).load(now);
  return cache;
}
const lines = (state: StateDir) => (fs.existsSync(state.file('replayJournal')) ? fs.readFileSync(state.file('replayJournal'), 'utf8').split('\n').filter(Boolean).length : 0);

describe('ReplayStore', () => {
  it('appends only what is new on each save, and a restart refuses every operation used before it', async () => {
    const state = stateDir();
    const cache = new ReplayCache();
    const store = new ReplayStore(state, cache);
    await store.load(0);
    cache.use('a', 0);
    await store.save(0);
    expect(lines(state)).toBe(1);
    for (let i = 0; i < 5; i++) {
      cache.use(`k${i}`, 10);
      await store.save(10);
    }
    expect(lines(state)).toBe(6);
    cache.use('k5', 20);
    cache.use('k6', 20);
    await store.save(20);
    expect(lines(state)).toBe(8);
    expect(fs.existsSync(state.file('replay'))).toBe(false);
    const after = await reloaded(state, 30);
    for (const key of ['a', 'k0', 'k4', 'k6']) expect(after.use(key, 30), key).toBe(false);
    expect(after.use('never', 30)).toBe(true);
  });

  it('writes a fresh snapshot and starts the journal again once it holds more lines than the cache has entries', async () => {
    const state = stateDir();
    const cache = new ReplayCache(1_000, 10_000);
    const store = new ReplayStore(state, cache);
    await store.load(0);
    for (let i = 0; i < 1_000; i++) cache.use(`k${i}`, 0);
    await store.save(0);
    expect(lines(state)).toBe(1_000);
    // The first thousand have expired: the journal outgrew the cache, so it is replaced by a snapshot.
    cache.use('later', 2_000);
    await store.save(2_000);
    expect(lines(state)).toBe(0);
    expect(JSON.parse(fs.readFileSync(state.file('replay'), 'utf8'))).toEqual([['later', 3_000]]);
    const after = await reloaded(state, 2_001);
    expect(after.size).toBe(1);
    expect(after.use('later', 2_001)).toBe(false);
    cache.use('next', 2_100);
    await store.save(2_100);
    expect(lines(state)).toBe(1);
  });

  it('skips a journal line a power cut left unfinished, and takes the snapshot and the journal together', async () => {
    const state = stateDir();
    await state.write('replay', JSON.stringify([['old', 60_000]]));
    await state.append('replayJournal', `${JSON.stringify(['new', 60_000])}\n["cut`);
    const cache = await reloaded(state, 1);
    expect(cache.use('old', 2)).toBe(false);
    expect(cache.use('new', 2)).toBe(false);
    expect(cache.size).toBe(2);
  });

  it('forgets entries past their window when it loads them', async () => {
    const state = stateDir();
    await state.append('replayJournal', `${JSON.stringify(['expired', 1_000])}\n${JSON.stringify(['live', 5_000])}\n`);
    const cache = await reloaded(state, 2_000);
    expect(cache.use('expired', 2_000)).toBe(true);
    expect(cache.use('live', 2_000)).toBe(false);
  });
});
