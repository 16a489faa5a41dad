import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { splitCommand } from './argv.js';
import type { CodeResult, SensorReport } from './controller.js';
import type { Logger } from './agent.js';

/**
 * What a device reads from the world besides the network: codes from a keypad (one a line on stdin) and
 * lines from the programs that watch a door sensor or a battery. The programs are run without a shell
 * (argv split like the actuator's commands) and their output read line by line.
 */

/** A watcher program that ended (crashed, unplugged) is started again this much later. */
export const WATCHER_RESTART_MS = 5_000;
/** A battery command is run again this often when it exits after printing (`--battery-interval`, seconds). */
export const DEFAULT_BATTERY_INTERVAL_S = 300;

export interface Stoppable {
  stop(): Promise<void>;
}

/**
 * Reads codes one a line from `input` and answers each on `output` with `DONE` or `REFUSED <reason>`,
 * one code at a time in the order typed. Blank lines are skipped. When the input ends, nothing more is
 * read (the agent keeps running).
 */
export function readKeypad(input: Readable, output: Writable, enterCode: (code: string) => Promise<CodeResult>, log: Logger): Stoppable {
  const lines = createInterface({ input, crlfDelay: Infinity });
  let queue: Promise<void> = Promise.resolve();
  lines.on('line', (line) => {
    const code = line.trim();
    if (!code) return;
    queue = queue.then(async () => {
      const result = await enterCode(code).catch((error: Error): CodeResult => ({ outcome: 'REFUSED', reason: error.message }));
      output.write(result.outcome === 'DONE' ? 'DONE\n' : `REFUSED ${result.reason ?? ''}\n`);
    });
  });
  lines.on('close', () => log.warn('The keypad input ended: no more codes are read until latchkey-device run is started again'));
  return {
    async stop() {
      lines.close();
      await queue;
    },
  };
}

/**
 * A door sensor's line: `open` or `closed`, or an alarm of the lock, `jammed` or `tampered` (a tamper switch
 * read by the same program); any case, surrounding spaces ignored. Anything else is null.
 */
export function doorLine(line: string): SensorReport | null {
  const word = line.trim().toLowerCase();
  if (word === 'open') return { type: 'door_opened' };
  if (word === 'closed') return { type: 'door_closed' };
  if (word === 'jammed' || word === 'tampered') return { type: word };
  return null;
}

/** A battery line: a whole number from 0 to 100 (a trailing `%` allowed); anything else is null. */
export function batteryLine(line: string): SensorReport | null {
  const match = /^\s*(\d{1,3})\s*%?\s*$/.exec(line);
  const value = match ? Number(match[1]) : NaN;
  return Number.isInteger(value) && value >= 0 && value <= 100 ? { type: 'battery', value } : null;
}

export interface WatchOptions {
  /** What the program watches, for the log: "door sensor", "battery". */
  name: string;
  command: string;
  /** Turns one output line into a report; null: the line is logged as not understood. */
  parse: (line: string) => SensorReport | null;
  report: (sensor: SensorReport) => void;
  log: Logger;
  /** After a clean exit (code 0), run again this much later; absent: only after WATCHER_RESTART_MS like a crash. */
  rerunAfterMs?: number;
  restartMs?: number;
}

/**
 * Runs a program and turns its output lines into reports. It may run for good (`gpiomon` piped into a
 * small script, a gauge printing a level now and then) or print and exit (a battery reading): a program
 * that exits is run again — after `rerunAfterMs` when it exited cleanly, after `restartMs` when it failed.
 */
export function watchCommand(options: WatchOptions): Stoppable {
  const argv = splitCommand(options.command);
  let child: ChildProcess | null = null;
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  let ended: Promise<void> = Promise.resolve();

  const start = () => {
    timer = null;
    if (stopped) return;
    const [file, ...args] = argv;
    const running = spawn(file!, args, { stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
    child = running;
    let lastError = '';
    createInterface({ input: running.stdout, crlfDelay: Infinity }).on('line', (line) => {
      if (!line.trim()) return;
      const sensor = options.parse(line);
      if (sensor) options.report(sensor);
      else options.log.warn(`The ${options.name} command printed a line it should not: ${JSON.stringify(line.slice(0, 100))}`);
    });
    createInterface({ input: running.stderr, crlfDelay: Infinity }).on('line', (line) => (lastError = line.slice(0, 200)));
    ended = new Promise((resolve) => {
      running.on('error', (error) => {
        options.log.warn(`The ${options.name} command could not start: ${error.message}`);
      });
      running.on('close', (code, signal) => {
        child = null;
        resolve();
        if (stopped) return;
        const clean = code === 0;
        if (!clean) options.log.warn(`The ${options.name} command ended (${signal ?? `exit code ${code}`})${lastError ? `: ${lastError}` : ''}; starting it again`);
        timer = setTimeout(start, clean && options.rerunAfterMs !== undefined ? options.rerunAfterMs : (options.restartMs ?? WATCHER_RESTART_MS));
        timer.unref();
      });
    });
  };
  start();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      child?.kill('SIGTERM');
      await ended;
    },
  };
}
