import { EventEmitter } from 'node:events';
import type { DeviceConfig, DeviceConfigAccessCode, DeviceEvent, Operation, OperationErrorKey } from '@latchkey/contract';
import { checkOfflineAccessCode, hashAccessCode, Keypad, keypadRefusals, OFFLINE_CODE_DIGITS } from './access-codes.js';
import { VirtualActuator, type Actuator } from './actuators.js';
import { verifyConfig, verifyOperation, type Verdict } from './checks.js';
import { deviceRefusals, lockRefusals } from './refusals.js';
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
  /** The device's offline-code secret (base64url), from its provisioning; absent: offline codes are refused. */
  offlineCodeSecret?: string | null;
  /** The keypad's lockout (5 wrong codes in 5 minutes → 5 minutes refused); defaults to one on `clock`. */
  keypad?: Keypad;
}

/**
 * Something the lock decided or noticed by itself, before it is numbered, chained and signed (the agent
 * does that on a device; the platform records a virtual lock's directly).
 */
export type LockEvent = Omit<DeviceEvent, 'eventId' | 'seq' | 'prev' | 'offline' | 'dropped'>;

export interface CodeResult {
  outcome: 'DONE' | 'REFUSED';
  reason?: string;
  /** The online code that was typed (a known code, done or refused for its window), or a withdrawn offline code. */
  accessCodeId?: string;
  /** An offline code's window (epoch seconds): it names the code on its lock. */
  codeWindow?: { start: number; end: number };
}

/** What a door sensor, a battery gauge or the lock's own alarms report. */
export type SensorReport = { type: 'door_opened' | 'door_closed' | 'jammed' | 'tampered' } | { type: 'battery'; value: number };

export interface LockState {
  locked: boolean;
  /** While unlocked: when it locks again (epoch ms); otherwise null. */
  unlockedUntil: number | null;
}

export interface HandleResult {
  outcome: 'DONE' | 'REFUSED';
  /** Why it was refused, in the platform's words where the platform has the same check. */
  reason?: string;
  /** The reason's key in the operation catalogue, when the platform has the same check: what the platform counts it as. */
  reasonKey?: OperationErrorKey;
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
  /** Something the lock decided by itself (a keypad code, a lockout) or a sensor reported. */
  event: [LockEvent];
}

/** The unlock time when the lock has no config yet (an offline code typed at a fresh device). */
const DEFAULT_UNLOCK_S = 5;
const CODE_FORMAT = /^\d{4,10}$/;

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
  private offlineCodeSecret: string | null;
  readonly keypad: Keypad;
  /** The config's online codes by salted hash: a typed code costs one hash whatever their number. */
  private codesByHash = new Map<string, DeviceConfigAccessCode>();
  private withdrawnByHash = new Map<string, DeviceConfigAccessCode>();
  private door: 'open' | 'closed' | null = null;
  private batteryLevel: number | null = null;

  constructor(options: LockControllerOptions) {
    super();
    this.lockId = options.lockId;
    this.trust = options.platformCa instanceof PlatformTrust ? options.platformCa : new PlatformTrust(options.platformCa);
    this.actuator = options.actuator ?? new VirtualActuator();
    this.current = options.config ?? null;
    this.replayCache = options.replayCache ?? new ReplayCache();
    this.clock = options.clock ?? Date.now;
    this.record = options.record;
    this.offlineCodeSecret = options.offlineCodeSecret ?? null;
    this.keypad = options.keypad ?? new Keypad({ clock: this.clock });
    if (this.current) this.indexCodes(this.current);
  }

  /** Gives the lock its offline-code secret (base64url), or takes it away with null. */
  setOfflineCodeSecret(secret: string | null): void {
    this.offlineCodeSecret = secret;
  }

  /** The door sensor's last report and the battery's last level, null until reported. */
  get sensors(): { door: 'open' | 'closed' | null; battery: number | null } {
    return { door: this.door, battery: this.batteryLevel };
  }

  /**
   * Epoch seconds from which the config no longer lets signed operations through (issuedAt +
   * offlineGraceSeconds), or null when the config sets no bound.
   */
  get configLapsesAt(): number | null {
    const config = this.current;
    if (!config || config.issuedAt === undefined || config.offlineGraceSeconds === undefined) return null;
    return config.issuedAt + config.offlineGraceSeconds;
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
    this.indexCodes(config);
    this.emit('config', config);
  }

  private indexCodes(config: DeviceConfig): void {
    this.codesByHash = new Map((config.accessCodes ?? []).map((code) => [code.hash, code]));
    this.withdrawnByHash = new Map((config.withdrawnOfflineCodes ?? []).map((code) => [code.hash, code]));
  }

  /**
   * A code typed at the keypad: an online code of the config (within its window) or an offline code of
   * this lock (within its window, not withdrawn) unlocks for the config's unlockTime; anything else is
   * refused and counts toward the lockout. Emits an `event` for each: unlocked or access_denied, and
   * keypad_locked_out when a refusal starts a lockout. While locked out, every code is refused without
   * being checked, and without an event (the lockout's own event says it).
   */
  async enterCode(code: string, nowMs = this.clock()): Promise<CodeResult> {
    const lockedOutUntil = this.keypad.lockedOutUntil(nowMs);
    if (lockedOutUntil !== null) return { outcome: 'REFUSED', reason: keypadRefusals.lockedOut(lockedOutUntil) };
    const { outcome, reason, accessCodeId, codeWindow } = this.checkCode(code.trim(), nowMs / 1000);
    const which = withoutUndefined({ accessCodeId, codeWindow });
    if (outcome === 'DONE') {
      const moved = await this.serially(() => this.unlockFor(this.current?.unlockTime ?? DEFAULT_UNLOCK_S));
      if (moved) {
        this.emitEvent({ at: nowMs, type: 'unlocked', method: 'access_code', ...which });
        return { outcome: 'DONE', ...which };
      }
      // The code held but the door did not move: not the typist's fault, so no lockout count.
      this.emitEvent({ at: nowMs, type: 'access_denied', method: 'access_code', ...which, reason: deviceRefusals.actuatorFailed });
      return { outcome: 'REFUSED', reason: deviceRefusals.actuatorFailed, ...which };
    }
    this.emitEvent({ at: nowMs, type: 'access_denied', method: 'access_code', ...which, reason });
    const lockout = this.keypad.wrongCode(nowMs);
    if (lockout !== null) this.emitEvent({ at: nowMs, type: 'keypad_locked_out', method: 'access_code', reason: keypadRefusals.lockedOut(lockout) });
    return { outcome: 'REFUSED', reason, ...which };
  }

  /** Whether a code holds now: DONE with the online code's id or the offline code's window. */
  private checkCode(code: string, nowS: number): CodeResult {
    if (!CODE_FORMAT.test(code)) return { outcome: 'REFUSED', reason: keypadRefusals.malformed };
    const salt = this.current?.accessCodeSalt;
    const hash = salt === undefined ? null : hashAccessCode(salt, code);
    const online = hash === null ? undefined : this.codesByHash.get(hash);
    if (online) {
      const { accessCodeId } = online;
      if (online.start !== null && nowS < online.start) return { outcome: 'REFUSED', reason: keypadRefusals.notYet, accessCodeId };
      if (online.end !== null && nowS >= online.end) return { outcome: 'REFUSED', reason: keypadRefusals.expired, accessCodeId };
      return { outcome: 'DONE', accessCodeId };
    }
    if (code.length !== OFFLINE_CODE_DIGITS || !this.offlineCodeSecret) return { outcome: 'REFUSED', reason: keypadRefusals.unknown };
    const offline = checkOfflineAccessCode(this.offlineCodeSecret, this.lockId, code, nowS);
    if (!offline.ok) return { outcome: 'REFUSED', reason: offline.reason };
    const withdrawn = hash === null ? undefined : this.withdrawnByHash.get(hash);
    const codeWindow = { start: offline.start, end: offline.end };
    if (withdrawn) return { outcome: 'REFUSED', reason: keypadRefusals.withdrawn, accessCodeId: withdrawn.accessCodeId, codeWindow };
    return { outcome: 'DONE', codeWindow };
  }

  /**
   * A report from the door's sensors or the lock's own alarms, as an event. A door state or battery level
   * equal to the last one reported is not an event again (a bouncing reed switch, a gauge polled often).
   */
  report(sensor: SensorReport, nowMs = this.clock()): boolean {
    if (sensor.type === 'door_opened' || sensor.type === 'door_closed') {
      const door = sensor.type === 'door_opened' ? 'open' : 'closed';
      if (door === this.door) return false;
      this.door = door;
    }
    if (sensor.type === 'battery') {
      if (!Number.isInteger(sensor.value) || sensor.value < 0 || sensor.value > 100) throw new RangeError('A battery level is a whole number from 0 to 100');
      if (sensor.value === this.batteryLevel) return false;
      this.batteryLevel = sensor.value;
      this.emitEvent({ at: nowMs, type: 'battery', value: sensor.value });
      return true;
    }
    this.emitEvent({ at: nowMs, type: sensor.type });
    return true;
  }

  private emitEvent(event: LockEvent): void {
    this.emit('event', withoutUndefined(event));
  }

  /** Checks a user's signed operation and, when it holds, acts on it. Never throws for a bad operation. */
  async handle(jws: string): Promise<HandleResult> {
    const verdict = verifyOperation(jws, { config: this.current, lockId: this.lockId, platformCa: this.trust, now: this.clock(), replayCache: this.replayCache });
    if (!verdict.ok) return { outcome: 'REFUSED', reason: verdict.reason, ...(verdict.reasonKey ? { reasonKey: verdict.reasonKey } : {}), state: this.state };
    const lapsesAt = this.configLapsesAt;
    if (lapsesAt !== null && this.clock() / 1000 >= lapsesAt) return { outcome: 'REFUSED', reason: lockRefusals.configLapsed(this.current!.issuedAt!), state: this.state };
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

const withoutUndefined = <T extends object>(value: T): T => Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
