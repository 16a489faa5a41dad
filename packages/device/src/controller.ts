import { EventEmitter } from 'node:events';
import type { DeviceConfig, Operation } from '@latchkey/contract';
import { VirtualActuator, type Actuator } from './actuators.js';
import { verifyConfig, verifyOperation, type Verdict } from './checks.js';
import { deviceRefusals } from './refusals.js';
import { ReplayCache } from './replay-cache.js';
import { PlatformTrust } from './trust.js';

export interface LockControllerOptions {
  /** The lock this controller drives: an operation's `sub` and a config's `lockId` must name it. */
  lockId: string;
  /** The platform CA (PEM, DER, or a PlatformTrust to share its leaf cache between controllers). */
  platformCa: PlatformTrust | string | Buffer;
  /** Defaults to a VirtualActuator. */
  actuator?: Actuator;
  /** A config already trusted (read back from the device's own store, or given by the platform in-process). */
  config?: DeviceConfig | null;
  /** Shared between the paths an operation may arrive by (MQTT, local HTTP, the CLI). */
  replayCache?: ReplayCache;
  /** Epoch ms; the tests move it. */
  clock?: () => number;
  /**
   * Puts the operations the replay cache has taken on disk (durably), before the lock acts on one or answers
   * DONE: a crash after the door moved can never let the same operation through again. When it fails, the
   * operation is refused and nothing moves.
   */
  record?: () => Promise<void>;
}

export interface LockState {
  locked: boolean;
  /** While unlocked: when it locks again (epoch ms); otherwise null. */
  unlockedUntil: number | null;
}

export interface HandleResult {
  outcome: 'DONE' | 'REFUSED';
  /** Why it was refused, in the platform's words where the platform has the same check. */
  reason?: string;
  state: LockState;
  /** The accepted operation and its signer (DONE only): an admin operation is the platform's to apply. */
  operation?: Operation;
  userId?: string;
}

interface ControllerEvents {
  /** The lock moved (or was told to and the actuator did it). */
  state: [LockState];
  /** A newer config was taken. */
  config: [DeviceConfig];
  /** The automatic lock after an unlock failed; the state stays unlocked and it is tried again. */
  actuatorError: [Error];
}

/** After a failed automatic lock, the next attempt comes this much later. */
const RELOCK_RETRY_MS = 2000;

/**
 * One lock: its current config, the operations it has obeyed, the bolt's state and what moves it.
 * `handle` checks a user's signed operation exactly as the platform does (verifyOperation) and acts on
 * it: an unlock opens for the operation's duration (or the config's unlockTime) and locks again; a lock
 * closes at once; an admin operation (shares, settings) is checked and answered DONE, the platform
 * applies it. Moves run one at a time, in the order the operations were accepted.
 */
export class LockController extends EventEmitter<ControllerEvents> {
  readonly lockId: string;
  readonly trust: PlatformTrust;
  readonly actuator: Actuator;
  readonly replayCache: ReplayCache;
  private current: DeviceConfig | null;
  private locked = true;
  private unlockedUntil: number | null = null;
  private relockTimer: NodeJS.Timeout | null = null;
  private moves: Promise<unknown> = Promise.resolve();
  private readonly clock: () => number;
  private readonly record: (() => Promise<void>) | undefined;

  constructor(options: LockControllerOptions) {
    super();
    this.lockId = options.lockId;
    this.trust = options.platformCa instanceof PlatformTrust ? options.platformCa : new PlatformTrust(options.platformCa);
    this.actuator = options.actuator ?? new VirtualActuator();
    this.current = options.config ?? null;
    this.replayCache = options.replayCache ?? new ReplayCache();
    this.clock = options.clock ?? Date.now;
    this.record = options.record;
  }

  get config(): DeviceConfig | null {
    return this.current;
  }

  get state(): LockState {
    return { locked: this.locked, unlockedUntil: this.unlockedUntil };
  }

  /** Takes a config JWS from the platform if it verifies and is not older than the one held. */
  applyConfig(jws: string): Verdict<{ config: DeviceConfig }> {
    const verdict = verifyConfig(jws, { platformCa: this.trust, lockId: this.lockId, current: this.current, now: this.clock() });
    if (verdict.ok) this.setConfig(verdict.config);
    return verdict;
  }

  /** Takes a config without a signature check: only for one the caller already trusts (the platform itself). */
  setConfig(config: DeviceConfig): void {
    this.current = config;
    this.emit('config', config);
  }

  /** Checks a user's signed operation and, when it holds, acts on it. Never throws for a bad operation. */
  async handle(jws: string): Promise<HandleResult> {
    const verdict = verifyOperation(jws, { config: this.current, lockId: this.lockId, platformCa: this.trust, now: this.clock(), replayCache: this.replayCache });
    if (!verdict.ok) return { outcome: 'REFUSED', reason: verdict.reason, state: this.state };
    if (this.record) {
      try {
        await this.record();
      } catch {
        return { outcome: 'REFUSED', reason: deviceRefusals.notRecorded, state: this.state };
      }
    }
    const { operation, userId } = verdict.verified;
    const done = { outcome: 'DONE' as const, operation, userId };
    if (operation.type !== 'MUTATE_LOCK') return { ...done, state: this.state };
    const durationS = operation.duration ?? this.current!.unlockTime;
    const moved = await this.serially(() => (operation.locked ? this.lockNow() : this.unlockFor(durationS)));
    return moved ? { ...done, state: this.state } : { outcome: 'REFUSED', reason: deviceRefusals.actuatorFailed, state: this.state };
  }

  /** Stops the automatic lock timer; with `lock`, closes the lock first (a device shutting down). */
  async close({ lock = false } = {}): Promise<void> {
    this.clearRelock();
    if (lock && !this.locked) await this.serially(() => this.lockNow());
    await this.moves;
  }

  private async unlockFor(durationS: number): Promise<boolean> {
    try {
      await this.actuator.unlock();
    } catch {
      return false;
    }
    this.clearRelock();
    this.unlockedUntil = this.clock() + durationS * 1000;
    this.changed(false);
    this.scheduleRelock(durationS * 1000);
    return true;
  }

  private async lockNow(): Promise<boolean> {
    try {
      await this.actuator.lock();
    } catch {
      return false;
    }
    this.clearRelock();
    this.unlockedUntil = null;
    this.changed(true);
    return true;
  }

  private scheduleRelock(afterMs: number): void {
    this.relockTimer = setTimeout(() => {
      this.relockTimer = null;
      void this.serially(async () => {
        if (this.locked || this.relockTimer) return true;
        try {
          await this.actuator.lock();
        } catch (error) {
          this.emit('actuatorError', error as Error);
          this.scheduleRelock(RELOCK_RETRY_MS);
          return false;
        }
        this.unlockedUntil = null;
        this.changed(true);
        return true;
      });
    }, afterMs);
    // The automatic lock alone never keeps a process alive (the platform runs sandbox locks in-process).
    this.relockTimer.unref();
  }

  private clearRelock(): void {
    if (this.relockTimer) clearTimeout(this.relockTimer);
    this.relockTimer = null;
  }

  private changed(locked: boolean): void {
    this.locked = locked;
    this.emit('state', this.state);
  }

  private serially(move: () => Promise<boolean>): Promise<boolean> {
    const next = this.moves.then(move, move);
    this.moves = next.catch(() => undefined);
    return next;
  }
}
