import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import {
  MAX_DEVICE_MESSAGE_BYTES,
  deviceOperationMessageSchema,
  type DeviceResult,
  type DeviceStateMessage,
} from '@latchkey/contract';
import type { Actuator } from './actuators.js';
import { verifyConfig } from './checks.js';
import { LockController, type CodeResult, type HandleResult, type LockEvent, type SensorReport } from './controller.js';
import { EventLog } from './event-log.js';
import { localEndpoints, startLocalHttp } from './local-http.js';
import { MAX_PENDING_RESULTS, readPendingResults, writePendingResults } from './pending-results.js';
import { acceptCertificate, needsRenewal, requestRenewal } from './renewal.js';
import { ReplayCache } from './replay-cache.js';
import { RefusalTally } from './refusal-tally.js';
import { reconnectDelayMs } from './reconnect-policy.js';
import { ReplayStore } from './replay-store.js';
import { loadDevice, UserError, type DeviceFiles, type DirectoryHolder, type StateDir } from './state-dir.js';
import { PlatformTrust } from './trust.js';

export interface Logger {
  info(message: string): void;
  warn(message: string): void;
}

export interface AgentOptions {
  state: StateDir;
  actuator: Actuator;
  firmware: string;
  /** Serve `POST /execute` on this port (0: any free port); absent: no local endpoint. */
  httpPort?: number;
  httpHost?: string;
  /** The URLs announced in `state.directAccessEndpoints` for the local endpoint. */
  directAccessEndpoints?: string[];
  log?: Logger;
  /** First reconnect delay; it doubles on every failure up to `maxReconnectMs`, with jitter. */
  reconnectMs?: number;
  maxReconnectMs?: number;
  keepaliveS?: number;
  /** After this many refusals in a row as not authorized (the device was unbound or replaced), it stops trying. Default 5. */
  maxNotAuthorized?: number;
  /** How long local refusals are counted before they are reported together (default a minute). */
  refusalReportMs?: number;
  /** Refusals per client address at the local endpoint before it answers 429 (default 10 a minute). */
  localRefusalLimit?: { max: number; windowMs: number };
  /** Undelivered events kept on disk before the oldest are dropped (default 10,000). */
  maxQueuedEvents?: number;
}

const RENEWAL_CHECK_MS = 6 * 3_600_000;
/** How long `stop` waits for the broker to acknowledge the device's goodbye, and each report it still sends. */
const STOP_WAIT_MS = 2000;

/** Whether `promise` settles successfully within `ms`. */
function withinMs(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    promise.then(
      () => (clearTimeout(timer), resolve(true)),
      () => (clearTimeout(timer), resolve(false)),
    );
  });
}
/**
 * A CONNACK refusal as not authorized: MQTT 3.1.1 return code 5, MQTT 5 reason code 135; and bad user name or
 * password (4, 134), which a device sending neither hears only when its certificate's name is refused, as
 * RabbitMQ answers an unbound device.
 */
const NOT_AUTHORIZED_CODES = new Set([4, 5, 134, 135]);
const DEFAULT_MAX_NOT_AUTHORIZED = 5;

/**
 * A lock on the network: connects to the platform's broker with its own certificate (mutual TLS over
 * mqtts:// or wss://), keeps presence (`online`, retained, with `offline` as its Last Will), reports its
 * state, takes signed configs and operations and answers each operation on `…/result`. It decides every
 * operation itself (LockController) from the last config it verified, which it keeps on disk, so the
 * same decisions hold offline, through the local endpoint, after a restart. An operation's use is on disk
 * before the lock acts on it; an outcome decided locally is reported to the platform (at once, or once
 * connected again), refusals counted together. It holds its state directory (`device.lock`) while it runs:
 * one replay cache per lock. What the lock decides by itself (a keypad code, a lockout) and what its
 * sensors report become signed, chained events (event-log.ts), on disk before they are published on
 * `…/event` and delivered in order after a time offline.
 */
export class DeviceAgent {
  readonly controller: LockController;
  readonly client: MqttClient;
  /** The port of the local endpoint, when it is served. */
  httpPort: number | null = null;
  private readonly topic: (name: string) => string;
  private readonly pending: DeviceResult[] = [];
  private readonly refusals: RefusalTally;
  private readonly log: Logger;
  private http: Server | null = null;
  private renewTimer: NodeJS.Timeout | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private reconnectAttempts = 0;
  /** Refusals as not authorized since the last connect. */
  private notAuthorized = 0;
  private refusedForGood!: () => void;
  /**
   * Settles once the broker has refused this device as not authorized `maxNotAuthorized` times in a row:
   * its certificate is no longer the lock's (unbound, or replaced by another device). It has stopped trying.
   */
  readonly refused = new Promise<void>((resolve) => (this.refusedForGood = resolve));
  private renewalAsked = 0;
  private stopping = false;
  private writes: Promise<unknown> = Promise.resolve();
  /** The replay-cache write queued and not yet begun, which a new accepted operation joins. */
  private replayWrite: Promise<void> | null = null;
  /** Connected, and every outcome kept while the broker was away has been sent: new ones may go at once. */
  private flushed = false;
  private endpoints: string[] | undefined;
  /** The state last reported on this connection, without its time. */
  private lastState: string | null = null;
  /** Publishing the event queue now (one sender at a time keeps the order). */
  private deliveringEvents = false;

  private constructor(
    private readonly options: AgentOptions,
    private files: DeviceFiles,
    controller: LockController,
    private readonly replayStore: ReplayStore,
    pending: DeviceResult[],
    private readonly holder: DirectoryHolder,
    private readonly events: EventLog,
  ) {
    this.controller = controller;
    this.refusals = new RefusalTally((results) => this.sendAll(results), options.refusalReportMs);
    this.pending.push(...pending);
    this.log = options.log ?? consoleLogger;
    this.endpoints = options.directAccessEndpoints;
    const prefix = files.identity.topicPrefix;
    this.topic = (name) => `${prefix}/${name}`;
    this.client = mqtt.connect(files.identity.mqttUrl, this.mqttOptions());
    this.client.on('connect', () => {
      // No Nagle delay: an operation's result is a small packet the platform is waiting on.
      (this.client.stream as { setNoDelay?: (noDelay: boolean) => void }).setNoDelay?.(true);
      void this.online();
    });
    this.client.on('message', (topic, payload) => void this.receive(topic, payload));
    this.client.on('error', (error) => this.failed(error));
    this.client.on('close', () => {
      this.flushed = false;
      this.scheduleReconnect();
    });
    controller.on('state', () => void this.publishState());
    controller.on('actuatorError', (error) => this.log.warn(`The automatic lock failed, trying again: ${error.message}`));
    controller.on('event', (event) => void this.recordEvent(event));
  }

  /** Loads the device's files, restores its last config and recent operations, connects, and serves the local endpoint. */
  static async start(options: AgentOptions): Promise<DeviceAgent> {
    const files = await loadDevice(options.state);
    const holder: DirectoryHolder = { pid: process.pid, token: randomUUID(), command: 'run', httpPort: null };
    const other = await options.state.take(holder);
    if (other) throw new UserError(`Another latchkey-device (${other.command}, pid ${other.pid}) is using ${options.state.dir}: one process per lock`);
    try {
      const log = options.log ?? consoleLogger;
      const trust = new PlatformTrust(files.platformCaPem);
      const replayCache = new ReplayCache();
      const replayStore = new ReplayStore(options.state, replayCache);
      await replayStore.load(Date.now());
      let agent: DeviceAgent | null = null;
      const events = await EventLog.open(options.state, {
        max: options.maxQueuedEvents,
        onDrop: (now, total) => {
          if (total === now || Math.floor((total - now) / 1000) !== Math.floor(total / 1000))
            log.warn(`The queue of undelivered events is full: dropped the oldest, ${total} since the platform was last reached (the next events say so in "dropped")`);
        },
      });
      const controller = new LockController({
        offlineCodeSecret: files.offlineCodeSecret,
        lockId: files.identity.lockId,
        platformCa: trust,
        actuator: options.actuator,
        replayCache,
        record: () => agent!.saveReplayCache(),
      });
      const keypad = await options.state.read('keypad');
      if (keypad) {
        try {
          controller.keypad.restore(JSON.parse(keypad));
        } catch {
          log.warn('The keypad’s saved wrong codes are not readable; starting without them');
        }
      }
      if (files.configJws) {
        const verdict = verifyConfig(files.configJws, { platformCa: trust, lockId: files.identity.lockId });
        if (verdict.ok) controller.setConfig(verdict.config);
        else log.warn(`The stored config is not usable (${verdict.reason}); waiting for the platform's`);
      }
      agent = new DeviceAgent(options, files, controller, replayStore, await readPendingResults(options.state), holder, events);
      if (events.pending.length > 0) log.info(`${events.pending.length} events wait to be delivered to the platform`);
      if (options.httpPort !== undefined) await agent.serveLocally(options.httpPort, options.httpHost);
      agent.renewTimer = setInterval(() => void agent.renewIfDue(), RENEWAL_CHECK_MS);
      return agent;
    } catch (error) {
      await options.state.release(holder);
      throw error;
    }
  }

  get deviceId(): string {
    return this.files.identity.deviceId;
  }

  /** Locks the door, says `offline` and disconnects. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.renewTimer) clearInterval(this.renewTimer);
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    await this.controller.close({ lock: true });
    await this.refusals.flush();
    await this.writes;
    await this.events.idle();
    // A broker that has just gone away never acknowledges: after a moment the connection is dropped instead.
    const said = this.client.connected && (await withinMs(this.client.publishAsync(this.topic('presence'), 'offline', { qos: 1, retain: true }), STOP_WAIT_MS));
    await this.client.endAsync(!said);
    await new Promise<void>((resolve) => (this.http ? this.http.close(() => resolve()) : resolve()));
    await this.options.state.release(this.holder);
  }

  private mqttOptions(): IClientOptions {
    const { identity, keyPem, certificatePem, deviceCaPem } = this.files;
    // Certificates only for a TLS URL: given a key and certificate, mqtt.js turns mqtt:// into mqtts:// itself.
    const secure = /^(mqtts|wss):/.test(identity.mqttUrl);
    return {
      clientId: identity.deviceId,
      clean: true,
      keepalive: this.options.keepaliveS ?? 30,
      // Reconnection is ours (scheduleReconnect): exponential, with jitter, so a thousand locks do not return at once.
      reconnectPeriod: 0,
      connectTimeout: 15_000,
      ...(secure ? { key: keyPem, cert: certificatePem, ca: [deviceCaPem] } : {}),
      will: { topic: this.topic('presence'), payload: Buffer.from('offline'), qos: 1, retain: true },
    };
  }

  private scheduleReconnect(): void {
    // A disconnect of our own (a renewed certificate) reconnects by itself.
    if (this.stopping || this.reconnectTimer || this.client.disconnecting) return;
    const delay = reconnectDelayMs(this.reconnectAttempts, this.options.reconnectMs, this.options.maxReconnectMs);
    this.reconnectAttempts++;
    this.log.warn(`Not connected to ${this.files.identity.mqttUrl}; trying again in ${(delay / 1000).toFixed(1)} s`);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      if (!this.stopping && !this.client.connected) this.client.reconnect();
    }, delay);
  }

  private failed(error: Error & { code?: unknown }): void {
    // An external broker refuses a revoked certificate in the TLS handshake (the CRL), which says the same.
    const revoked = error.code === 'ERR_SSL_SSLV3_ALERT_CERTIFICATE_REVOKED' || /certificate revoked/i.test(error.message);
    if (!NOT_AUTHORIZED_CODES.has(error.code as number) && !revoked) return this.log.warn(`MQTT: ${error.message}`);
    this.notAuthorized++;
    const max = this.options.maxNotAuthorized ?? DEFAULT_MAX_NOT_AUTHORIZED;
    this.log.warn(
      `The platform refused this device as not authorized${revoked ? ' (its certificate is revoked)' : ''} (${this.notAuthorized} of ${max}): it has been unbound from its lock, or replaced by another device`,
    );
    if (this.notAuthorized < max) return;
    // Trying again cannot help: only a new provisioning can. No more reconnects; run says so and exits.
    this.stopping = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    this.refusedForGood();
  }

  private async online(): Promise<void> {
    this.reconnectAttempts = 0;
    this.notAuthorized = 0;
    this.flushed = false;
    this.log.info(`Connected to ${this.files.identity.mqttUrl} as ${this.deviceId}`);
    try {
      // Subscribed before saying online: the platform answers `online` with the config, and a broker whose
      // retained messages are kept per node (RabbitMQ) would not hand an earlier one to this connection.
      await this.client.subscribeAsync([this.topic('config'), this.topic('op'), this.topic('certificate')], { qos: 1 });
      await this.client.publishAsync(this.topic('presence'), 'online', { qos: 1, retain: true });
      await this.publishState({ always: true });
      if (this.pending.length > 0) {
        while (this.pending.length > 0 && this.client.connected) {
          await this.client.publishAsync(this.topic('result'), JSON.stringify(this.pending[0]), { qos: 1 });
          this.pending.shift();
        }
        this.flushed = this.client.connected;
        await this.savePending();
      } else {
        this.flushed = this.client.connected;
      }
      await this.deliverEvents();
      await this.renewIfDue();
    } catch (error) {
      this.log.warn(`MQTT: ${(error as Error).message}`);
    }
  }

  /**
   * Reports the state (retained). On a connection, only what is new: an unlock of a lock already open moves
   * nothing the report says, and sending it again would cost the platform a write for each such unlock.
   */
  private async publishState({ always = false } = {}): Promise<void> {
    if (!this.client.connected) return;
    const state: DeviceStateMessage = { locked: this.controller.state.locked, firmware: this.options.firmware, at: new Date().toISOString() };
    const configVersion = this.controller.config?.version;
    if (configVersion !== undefined) state.configVersion = configVersion;
    if (this.endpoints?.length) state.directAccessEndpoints = this.endpoints;
    const says = JSON.stringify({ ...state, at: undefined });
    if (!always && says === this.lastState) return;
    this.lastState = says;
    await this.client.publishAsync(this.topic('state'), JSON.stringify(state), { qos: 1, retain: true }).catch((error: Error) => this.log.warn(`MQTT: ${error.message}`));
  }

  private async receive(topic: string, payload: Buffer): Promise<void> {
    // Once stopping, nothing more is taken: `stop` has waited for the last write, and the retained config
    // comes again at the next connection.
    if (this.stopping) return;
    if (payload.length > MAX_DEVICE_MESSAGE_BYTES) return this.log.warn(`Ignored a ${payload.length}-byte message on ${topic}: too large`);
    const text = payload.toString('utf8');
    if (topic === this.topic('config')) return this.takeConfig(text);
    if (topic === this.topic('op')) return this.takeOperation(text);
    if (topic === this.topic('certificate')) return this.takeCertificate(text);
  }

  private async takeConfig(jws: string): Promise<void> {
    const verdict = this.controller.applyConfig(jws);
    if (!verdict.ok) return this.log.warn(`Ignored a config: ${verdict.reason}`);
    // One write after another, as the agent's other files (`stop` waits for the last); a config that cannot be
    // saved is still obeyed until the next start, and said.
    const write = () => this.options.state.write('config', jws);
    const next = this.writes.then(write, write);
    this.writes = next.catch((error: Error) => this.log.warn(`Could not save the config: ${error.message}`));
    await this.writes;
    const codes = verdict.config.accessCodes?.length ?? 0;
    this.log.info(`Config version ${verdict.config.version}: ${verdict.config.users.length} users, ${codes} access codes, unlock time ${verdict.config.unlockTime} s`);
    // The platform learns from the state which config the lock holds (an access code in it is then set).
    await this.publishState();
  }

  /** A code typed at the keypad: checked by the controller (which records the event), and logged without the code. */
  async enterCode(code: string): Promise<CodeResult> {
    const before = JSON.stringify(this.controller.keypad.snapshot());
    const result = await this.controller.enterCode(code);
    // The wrong codes and a lockout are on disk before the answer: cutting the power does not reset them.
    const after = JSON.stringify(this.controller.keypad.snapshot());
    if (after !== before) await this.options.state.write('keypad', after, 0o600).catch((error: Error) => this.log.warn(`Could not save the keypad's wrong codes: ${error.message}`));
    this.log.info(`Keypad: ${result.outcome}${result.accessCodeId ? ` (access code ${result.accessCodeId})` : ''}${result.reason ? ` (${result.reason})` : ''}`);
    return result;
  }

  /** A report from a door sensor or battery gauge: an event when it says something new. */
  reportSensor(sensor: SensorReport): boolean {
    const reported = this.controller.report(sensor);
    if (reported) this.log.info(`Sensor: ${sensor.type}${sensor.type === 'battery' ? ` ${sensor.value}%` : ''}`);
    return reported;
  }

  /**
   * Signs the event into the chain and has it on disk, then publishes the queue. An event decided while
   * the broker is away says `offline: true`.
   */
  private async recordEvent(event: LockEvent): Promise<void> {
    try {
      const offline = !this.client.connected;
      await this.events.append({ ...event, ...(offline ? { offline } : {}) }, { keyPem: this.files.keyPem, deviceId: this.deviceId });
    } catch (error) {
      return this.log.warn(`Could not record an event (${event.type}): ${(error as Error).message}`);
    }
    await this.deliverEvents();
  }

  /** Publishes the undelivered events in order (QoS 1), marking them delivered as the broker acknowledges them. */
  private async deliverEvents(): Promise<void> {
    if (this.deliveringEvents) return;
    this.deliveringEvents = true;
    let sent = 0;
    try {
      while (this.client.connected && this.events.pending.length > 0) {
        const batch = this.events.pending.slice(0, this.events.batch);
        // A batch is in flight at once: the connection carries the publishes in order, and the broker keeps
        // one client's order, so waiting for each acknowledgement before the next would only add round trips.
        await Promise.all(batch.map((event) => this.client.publishAsync(this.topic('event'), event.jws, { qos: 1 })));
        await this.events.delivered(batch.at(-1)!.seq);
        sent += batch.length;
      }
    } catch (error) {
      this.log.warn(`Could not deliver the events (kept for the next connection): ${(error as Error).message}`);
    } finally {
      this.deliveringEvents = false;
    }
    if (sent > 1) this.log.info(`Delivered ${sent} events to the platform`);
  }

  private async takeOperation(text: string): Promise<void> {
    let message;
    try {
      message = deviceOperationMessageSchema.parse(JSON.parse(text));
    } catch {
      return this.log.warn('Ignored a malformed message on …/op: it must be {requestId, jws}');
    }
    const result = await this.controller.handle(message.jws);
    this.log.info(`${message.requestId}: ${result.outcome}${result.reason ? ` (${result.reason})` : ''}`);
    await this.report(message.requestId, result);
  }

  /** Publishes an answer to an operation from the platform on `…/result`, or keeps it for when the broker is back. */
  private async report(requestId: string, result: HandleResult): Promise<void> {
    const message: DeviceResult = { requestId, outcome: result.outcome, state: { locked: result.state.locked } };
    if (result.reason) message.reason = result.reason.slice(0, 500);
    if (result.reasonKey) message.reasonKey = result.reasonKey;
    await this.send(message);
  }

  /**
   * An outcome of the local endpoint: done, it is reported with the operation, for the platform's log;
   * refused, it is counted and reported with the others of its window.
   */
  private reportLocal(result: HandleResult, jws: string): void {
    if (result.outcome === 'REFUSED') return this.refusals.add(result, result.state.locked);
    void this.send({ requestId: `local-${randomUUID()}`, outcome: 'DONE', state: { locked: result.state.locked }, method: 'local', at: new Date().toISOString(), jws });
  }

  private async sendAll(messages: DeviceResult[]): Promise<void> {
    for (const message of messages) await this.send(message);
  }

  private async send(message: DeviceResult): Promise<void> {
    // Outcomes go out in the order they were decided: while older ones wait to be sent, a new one waits behind them.
    if (this.client.connected && this.flushed && this.pending.length === 0) {
      try {
        const published = this.client.publishAsync(this.topic('result'), JSON.stringify(message), { qos: 1 });
        // Stopping, the broker's acknowledgement is waited for briefly: one that does not answer (a dead link,
        // a hung broker) gets the report on the next run instead, and the platform logs a report sent twice once.
        if (!this.stopping) {
          await published;
          return;
        }
        if (await withinMs(published, STOP_WAIT_MS)) return;
      } catch {
        // Kept below and sent on the next connection.
      }
    }
    if (this.pending.length >= MAX_PENDING_RESULTS) this.pending.shift();
    this.pending.push(message);
    await this.savePending();
  }

  private savePending(): Promise<void> {
    const write = () => writePendingResults(this.options.state, this.pending);
    const next = this.writes.then(write, write);
    this.writes = next.catch((error: Error) => this.log.warn(`Could not save the outcomes for the platform: ${error.message}`));
    return next.catch(() => undefined);
  }

  /**
   * Puts the used operations on disk (replay-store.ts: appended to a journal and synced), one write after
   * another; `stop` waits for the last. The controller calls it before it acts on an operation. Operations
   * accepted while a write is waiting its turn join that write (it takes what is new when it starts), so a
   * burst costs a write or two, not one each, and no lock moves before its operation is on disk.
   */
  saveReplayCache(): Promise<void> {
    if (this.replayWrite) return this.replayWrite;
    const write = () => {
      this.replayWrite = null;
      return this.replayStore.save(Date.now());
    };
    const next = this.writes.then(write, write);
    this.replayWrite = next;
    this.writes = next.catch((error: Error) => this.log.warn(`Could not save the used operations: ${error.message}`));
    return next;
  }

  private async serveLocally(port: number, host?: string): Promise<void> {
    const { server, port: bound } = await startLocalHttp({
      controller: this.controller,
      port,
      host,
      onOutcome: (result, jws) => this.reportLocal(result, jws),
      refusalLimit: this.options.localRefusalLimit,
    });
    this.http = server;
    this.httpPort = bound;
    this.endpoints ??= localEndpoints(bound, host);
    this.holder.httpPort = bound;
    await this.options.state.updateHolder(this.holder);
    this.log.info(`Local endpoint: POST http://${host ?? '0.0.0.0'}:${bound}/execute`);
  }

  /** With less than the renewal margin left, sends a CSR for a new key; the key is used once its certificate arrives. */
  /** With less than the renewal margin left, sends a CSR for a new key, at most once an hour. */
  private async renewIfDue(): Promise<void> {
    if (!this.client.connected || !needsRenewal(this.files.certificatePem, Date.now())) return;
    // Events are signed with the key in use: they reach the platform before it learns of a new key.
    if (this.events.pending.length > 0) return;
    if (Date.now() - this.renewalAsked < 3_600_000) return;
    this.renewalAsked = Date.now();
    await this.client.publishAsync(this.topic('renew'), await requestRenewal(this.options.state, this.deviceId), { qos: 1 });
    this.log.info('The certificate expires soon: asked the platform for a new one');
  }

  private async takeCertificate(text: string): Promise<void> {
    const problem = await acceptCertificate(this.options.state, this.files, text);
    if (problem) return this.log.warn(`Ignored a certificate: ${problem}`);
    this.files = await loadDevice(this.options.state);
    this.renewalAsked = 0;
    this.log.info('Stored the renewed certificate; reconnecting with it');
    this.useCredentials();
    // A clean disconnect: the broker drops the Last Will, and the next connection says online again.
    this.client.end(false, {}, () => {
      if (!this.stopping) this.client.reconnect();
    });
  }

  private useCredentials(): void {
    const { key, cert } = this.mqttOptions();
    const options = this.client.options as IClientOptions & { wsOptions?: Record<string, unknown> };
    Object.assign(options, { key, cert });
    if (options.wsOptions) Object.assign(options.wsOptions, { key, cert });
  }
}

const consoleLogger: Logger = {
  info: (message) => console.log(`${new Date().toISOString()} ${message}`),
  warn: (message) => console.warn(`${new Date().toISOString()} ${message}`),
};
