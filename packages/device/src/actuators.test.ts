import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommandActuator, VirtualActuator } from './actuators.js';
import { splitCommand } from './argv.js';

describe('splitCommand', () => {
  it('splits words like a shell, quotes and escapes included, and expands nothing', () => {
    expect(splitCommand('gpioset gpiochip0 17=1')).toEqual(['gpioset', 'gpiochip0', '17=1']);
    expect(splitCommand(`/bin/sh -c 'echo on >> "/tmp/a b"'`)).toEqual(['/bin/sh', '-c', 'echo on >> "/tmp/a b"']);
    expect(splitCommand(`say "it's \\"open\\"" a\\ b $HOME *`)).toEqual(['say', `it's "open"`, 'a b', '$HOME', '*']);
    expect(splitCommand(`x '' ""`)).toEqual(['x', '', '']);
  });

  it('refuses an unclosed quote, a trailing backslash and an empty command', () => {
    expect(() => splitCommand(`echo 'open`)).toThrow(/unclosed ' quote/);
    expect(() => splitCommand('echo \\')).toThrow(/backslash/);
    expect(() => splitCommand('   ')).toThrow(/empty/);
  });
});

describe('VirtualActuator', () => {
  it('holds the state in memory and emits each change once', async () => {
    const actuator = new VirtualActuator();
    const changes: boolean[] = [];
    actuator.on('change', (locked) => changes.push(locked));
    await actuator.unlock();
    await actuator.unlock();
    await actuator.lock();
    expect(changes).toEqual([false, true]);
    expect(actuator.locked).toBe(true);
  });
});

describe('CommandActuator', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'latchkey-actuator-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('runs the configured programs, arguments as written, without a shell', async () => {
    const file = path.join(dir, 'relay log');
    const actuator = new CommandActuator({ unlockCommand: `/bin/sh -c 'echo on >> "$0"' '${file}'`, lockCommand: `/bin/sh -c 'echo off >> "$0"' '${file}'` });
    await actuator.unlock();
    await actuator.lock();
    expect(await readFile(file, 'utf8')).toBe('on\noff\n');
  });

  it('rejects on a non-zero exit, a missing program and a timeout', async () => {
    const failing = new CommandActuator({ unlockCommand: `/bin/sh -c 'echo relay busy >&2; exit 3'`, lockCommand: '/nonexistent/gpioset 17=0', timeoutMs: 200 });
    await expect(failing.unlock()).rejects.toThrow(/\/bin\/sh failed: .*\(relay busy\)/);
    await expect(failing.lock()).rejects.toThrow(/ENOENT/);
    const slow = new CommandActuator({ unlockCommand: 'sleep 5', lockCommand: 'true', timeoutMs: 100 });
    await expect(slow.unlock()).rejects.toThrow(/sleep failed/);
  });

  it('refuses a command line it cannot split when it is configured', () => {
    expect(() => new CommandActuator({ unlockCommand: `gpioset '17=1`, lockCommand: 'true' })).toThrow(/quote/);
  });
});
