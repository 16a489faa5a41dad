import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { CodeResult, SensorReport } from './controller.js';
import { batteryLine, doorLine, readKeypad, watchCommand } from './inputs.js';

const quiet = { info: () => undefined, warn: () => undefined };

describe('sensor lines', () => {
  it('reads open / closed for a door (and jammed / tampered alarms), and a level from 0 to 100 for a battery', () => {
    expect(doorLine(' OPEN ')).toEqual({ type: 'door_opened' });
    expect(doorLine('closed')).toEqual({ type: 'door_closed' });
    expect(doorLine('Tampered')).toEqual({ type: 'tampered' });
    expect(doorLine('jammed')).toEqual({ type: 'jammed' });
    expect(doorLine('opened')).toBeNull();
    expect(batteryLine('57')).toEqual({ type: 'battery', value: 57 });
    expect(batteryLine(' 100% ')).toEqual({ type: 'battery', value: 100 });
    expect(batteryLine('0')).toEqual({ type: 'battery', value: 0 });
    for (const line of ['101', '-1', '5.5', 'full', '']) expect(batteryLine(line), line).toBeNull();
  });
});

describe('readKeypad', () => {
  it('answers each code on its own line in the order typed, skipping blank lines', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const typed: string[] = [];
    const keypad = readKeypad(
      input,
      output,
      async (code): Promise<CodeResult> => {
        typed.push(code);
        // The first code takes longest: its answer still comes first.
        await new Promise((resolve) => setTimeout(resolve, code === '1111' ? 30 : 0));
        return code === '1111' ? { outcome: 'DONE' } : { outcome: 'REFUSED', reason: 'This code does not open this lock' };
      },
      quiet,
    );
    let answers = '';
    output.on('data', (chunk: Buffer) => (answers += chunk.toString()));
    input.write('1111\r\n\n  2222  \n');
    await expect.poll(() => answers).toBe('DONE\nREFUSED This code does not open this lock\n');
    expect(typed).toEqual(['1111', '2222']);
    await keypad.stop();
  });
});

describe('watchCommand', () => {
  it('reports each line a long-running program prints, and starts a program again after it fails', async () => {
    const reports: SensorReport[] = [];
    const warnings: string[] = [];
    const watcher = watchCommand({
      name: 'door sensor',
      command: `/bin/sh -c "echo open; echo closed; exit 3"`,
      parse: doorLine,
      report: (sensor) => reports.push(sensor),
      log: { info: () => undefined, warn: (m) => warnings.push(m) },
      restartMs: 10,
    });
    await expect.poll(() => reports.length).toBeGreaterThanOrEqual(4);
    await watcher.stop();
    expect(reports.slice(0, 4).map((r) => r.type)).toEqual(['door_opened', 'door_closed', 'door_opened', 'door_closed']);
    expect(warnings[0]).toMatch(/door sensor command ended \(exit code 3\); starting it again/);
  });

  it('runs a program that prints and exits cleanly again after the interval', async () => {
    const reports: SensorReport[] = [];
    const watcher = watchCommand({ name: 'battery', command: '/bin/echo 42', parse: batteryLine, report: (sensor) => reports.push(sensor), log: quiet, rerunAfterMs: 20, restartMs: 60_000 });
    await expect.poll(() => reports.length).toBeGreaterThanOrEqual(2);
    await watcher.stop();
    expect(reports[0]).toEqual({ type: 'battery', value: 42 });
  });
});
