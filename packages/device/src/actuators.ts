import { execFile } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { splitCommand } from './argv.js';

/**
 * What moves the bolt. The controller decides; an actuator only does what it is told and rejects when it
 * could not, so a failed move is reported instead of a door that stayed shut being called open.
 */
export interface Actuator {
  /** `virtual` or `command`: shown in the device's logs and status. */
  readonly kind: string;
  unlock(): Promise<void>;
  lock(): Promise<void>;
}

/** A lock in memory: the sandbox's locks and a device with no hardware. Emits `change` with `locked`. */
export class VirtualActuator extends EventEmitter<{ change: [locked: boolean] }> implements Actuator {
  readonly kind = 'virtual';
  locked = true;

  async unlock(): Promise<void> {
    this.set(false);
  }

  async lock(): Promise<void> {
    this.set(true);
  }

  private set(locked: boolean): void {
    if (this.locked === locked) return;
    this.locked = locked;
    this.emit('change', locked);
  }
}

export interface CommandActuatorOptions {
  /** The program and arguments that open the lock, e.g. `gpioset gpiochip0 17=1`. */
  unlockCommand: string;
  /** The program and arguments that close it again, e.g. `gpioset gpiochip0 17=0`. */
  lockCommand: string;
  /** A command still running after this long is killed and counts as failed. */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * Runs a configured program to move the lock (a relay through `gpioset`, a script, a vendor tool), so a
 * Raspberry Pi needs no native module. The command lines are split into argv here and run without a
 * shell; a non-zero exit, a signal or the timeout is a failure.
 */
export class CommandActuator implements Actuator {
  readonly kind = 'command';
  private readonly unlockArgv: string[];
  private readonly lockArgv: string[];
  private readonly timeoutMs: number;

  constructor(options: CommandActuatorOptions) {
    this.unlockArgv = splitCommand(options.unlockCommand);
    this.lockArgv = splitCommand(options.lockCommand);
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  unlock(): Promise<void> {
    return this.run(this.unlockArgv);
  }

  lock(): Promise<void> {
    return this.run(this.lockArgv);
  }

  private run([file, ...args]: string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      execFile(file!, args, { timeout: this.timeoutMs, windowsHide: true }, (error, _stdout, stderr) => {
        if (!error) return resolve();
        const detail = String(stderr).trim().split('\n').at(-1);
        reject(new Error(`${file} failed: ${error.message.split('\n')[0]}${detail ? ` (${detail})` : ''}`));
      });
    });
  }
}
