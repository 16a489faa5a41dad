import { once } from 'node:events';
import type { DeviceResult } from '@latchkey/contract';
import { X509Certificate, randomUUID } from 'node:crypto';
import { VirtualActuator, CommandActuator, type Actuator } from './actuators.js';
import { DeviceAgent, type Logger } from './agent.js';
import { countUndelivered } from './event-log.js';
import { batteryLine, DEFAULT_BATTERY_INTERVAL_S, doorLine, readKeypad, watchCommand, type Stoppable } from './inputs.js';
import { verifyConfig } from './checks.js';
import { LockController } from './controller.js';
import { readPendingResults, writePendingResults } from './pending-results.js';
import { provision } from './provision.js';
import { isMalformed } from './refusals.js';
import { ReplayCache } from './replay-cache.js';
import { ReplayStore } from './replay-store.js';
import { loadDevice, StateDir, UserError, type DirectoryHolder } from './state-dir.js';
import { PlatformTrust } from './trust.js';

/** What the commands of `latchkey-device` do; cli.ts reads the arguments and calls these. */

export interface ActuatorChoice {
  actuator?: string;
  unlockCommand?: string;
  lockCommand?: string;
}

export function actuatorFrom({ actuator = 'virtual', unlockCommand, lockCommand }: ActuatorChoice): Actuator {
  if (actuator === 'virtual') return new VirtualActuator();
  if (actuator !== 'command') throw new UserError(`--actuator must be virtual or command (got ${actuator})`);
  if (!unlockCommand || !lockCommand) throw new UserError('--actuator command needs --unlock-command "…" and --lock-command "…", e.g. "gpioset gpiochip0 17=1" and "gpioset gpiochip0 17=0"');
  try {
    return new CommandActuator({ unlockCommand, lockCommand });
  } catch (error) {
    throw new UserError(`A command could not be read: ${(error as Error).message}`);
  }
}

export async function provisionCommand(state: StateDir, apiUrl: string, code: string): Promise<void> {
  const identity = await provision({ apiUrl, code, state });
  console.log(`Provisioned device ${identity.deviceId} for lock ${identity.lockId}.`);
  console.log(`Broker: ${identity.mqttUrl}. Key and certificate are in ${state.dir}.`);
  console.log(`Next: latchkey-device run${state.dir === new StateDir().dir ? '' : ` --dir ${state.dir}`}`);
}

export interface RunChoice extends ActuatorChoice {
  firmware: string;
  httpPort?: number;
  httpHost?: string;
  advertise?: string[];
  /** `stdin`: codes one a line on standard input, answered on standard output (the log goes to standard error). */
  keypad?: 'stdin';
  /** A program printing `open` / `closed` lines. */
  doorSensor?: string;
  /** A program printing battery levels (0–100), one a line; run again `batteryIntervalS` after it exits. */
  battery?: string;
  batteryIntervalS?: number;
}

/** Every line to standard error: with a keypad on stdin, standard output carries the answers alone. */
const stderrLogger: Logger = {
  info: (message) => console.error(`${new Date().toISOString()} ${message}`),
  warn: (message) => console.error(`${new Date().toISOString()} ${message}`),
};

export async function runCommand(state: StateDir, choice: RunChoice): Promise<void> {
  const log = choice.keypad ? stderrLogger : undefined;
  const say = (message: string) => (log ? log.info(message) : console.log(message));
  const agent = await DeviceAgent.start({
    state,
    actuator: actuatorFrom(choice),
    firmware: choice.firmware,
    httpPort: choice.httpPort,
    httpHost: choice.httpHost,
    directAccessEndpoints: choice.advertise?.length ? choice.advertise : undefined,
    log,
  });
  say(`Device ${agent.deviceId} running with the ${agent.controller.actuator.kind} actuator; config ${agent.controller.config ? `version ${agent.controller.config.version}` : 'not received yet'}.`);
  const logger = log ?? { info: (m: string) => console.log(`${new Date().toISOString()} ${m}`), warn: (m: string) => console.warn(`${new Date().toISOString()} ${m}`) };
  const inputs: Stoppable[] = [];
  if (choice.keypad === 'stdin') inputs.push(readKeypad(process.stdin, process.stdout, (code) => agent.enterCode(code), logger));
  const report = (sensor: Parameters<DeviceAgent['reportSensor']>[0]) => void agent.reportSensor(sensor);
  if (choice.doorSensor) inputs.push(watchCommand({ name: 'door sensor', command: choice.doorSensor, parse: doorLine, report, log: logger }));
  if (choice.battery)
    inputs.push(watchCommand({ name: 'battery', command: choice.battery, parse: batteryLine, report, log: logger, rerunAfterMs: (choice.batteryIntervalS ?? DEFAULT_BATTERY_INTERVAL_S) * 1000 }));
  const ended = await Promise.race([
    once(process, 'SIGINT').then(() => 'SIGINT'),
    once(process, 'SIGTERM').then(() => 'SIGTERM'),
    agent.refused.then(() => 'refused' as const),
  ]);
  await Promise.all(inputs.map((input) => input.stop()));
  if (ended === 'refused') {
    await agent.stop();
    throw new UserError(unboundMessage(agent.deviceId, state.dir));
  }
  say(`${ended}: locking and disconnecting`);
  await agent.stop();
}

/** What `run` says when the platform keeps refusing the device: unbound or replaced, and how to set it up again. */
export function unboundMessage(deviceId: string, dir: string): string {
  return [
    `The platform no longer accepts device ${deviceId} (refused as not authorized on every try): it was unbound from its lock, or replaced by another device.`,
    `Stopped trying. To use this controller again, choose "Connect a device" on the lock's page and provision it with the new code:`,
    `  latchkey-device provision --api <url> --code <code>${dir === new StateDir().dir ? '' : ` --dir ${dir}`}`,
  ].join('\n');
}

/**
 * Decides one signed operation on this device, in the one process that holds its state directory (and so
 * its replay cache): when `run` holds it and serves a local endpoint, the operation goes to that endpoint;
 * when `run` holds it without one (or another `execute` does), it is refused here with what to do, never
 * decided beside it. Otherwise it is decided here from the stored config — its use on disk before the lock
 * moves — and an unlock waits until the lock has closed again. Returns the exit code.
 */
export async function executeCommand(state: StateDir, jws: string, choice: ActuatorChoice): Promise<number> {
  const files = await loadDevice(state);
  const holder: DirectoryHolder = { pid: process.pid, token: randomUUID(), command: 'execute', httpPort: null };
  const other = await state.take(holder);
  if (other) {
    if (other.command === 'run' && other.httpPort) {
      const answer = await fetch(`http://127.0.0.1:${other.httpPort}/execute`, { method: 'POST', body: jws.trim(), headers: { 'content-type': 'text/plain' } });
      if (answer.status === 204) return done('DONE');
      const body = (await answer.json().catch(() => ({}))) as { message?: string };
      return done('REFUSED', body.message ?? `HTTP ${answer.status}`);
    }
    throw new UserError(
      other.command === 'run'
        ? `latchkey-device run (pid ${other.pid}) decides this lock's operations and serves no local endpoint: start it with --http-port for execute to hand operations to it, or stop it first`
        : `Another latchkey-device execute (pid ${other.pid}) is deciding an operation for ${state.dir}: try again once it has finished`,
    );
  }
  try {
    const trust = new PlatformTrust(files.platformCaPem);
    const replayCache = new ReplayCache();
    const replayStore = new ReplayStore(state, replayCache);
    await replayStore.load(Date.now());
    const stored = files.configJws ? verifyConfig(files.configJws, { platformCa: trust, lockId: files.identity.lockId }) : null;
    const controller = new LockController({
      lockId: files.identity.lockId,
      platformCa: trust,
      actuator: actuatorFrom(choice),
      replayCache,
      config: stored?.ok ? stored.config : null,
      record: () => replayStore.save(Date.now()),
    });
    const result = await controller.handle(jws.trim());
    // A decision is told to the platform by the agent when it next connects; what was not an operation is not.
    const report: DeviceResult = { requestId: `local-${randomUUID()}`, outcome: result.outcome, state: { locked: result.state.locked }, method: 'local', at: new Date().toISOString() };
    if (result.outcome === 'DONE') report.jws = jws.trim();
    else Object.assign(report, { reason: result.reason!.slice(0, 500), count: 1 }, result.reasonKey ? { reasonKey: result.reasonKey } : {});
    if (result.outcome === 'DONE' || !isMalformed(result.reasonKey)) await writePendingResults(state, [...(await readPendingResults(state)), report]);
    if (result.outcome !== 'DONE') return done('REFUSED', result.reason);
    done('DONE');
    if (!controller.state.locked) {
      console.log(`Unlocked until ${new Date(controller.state.unlockedUntil!).toLocaleTimeString()}; locking again then.`);
      const timer = setInterval(() => undefined, 60_000);
      while (!controller.state.locked) await once(controller, 'state');
      clearInterval(timer);
    }
    return 0;
  } finally {
    await state.release(holder);
  }
}

function done(outcome: 'DONE' | 'REFUSED', reason?: string): number {
  console.log(reason ? `${outcome} ${reason}` : outcome);
  return outcome === 'DONE' ? 0 : 1;
}

export async function statusCommand(state: StateDir): Promise<void> {
  const files = await loadDevice(state);
  const { identity } = files;
  const certificate = new X509Certificate(files.certificatePem);
  const stored = files.configJws ? verifyConfig(files.configJws, { platformCa: new PlatformTrust(files.platformCaPem), lockId: identity.lockId }) : null;
  const running = await state.holder();
  const lines = [
    ['Device', identity.deviceId],
    ['Lock', identity.lockId],
    ['API', identity.apiUrl],
    ['Broker', identity.mqttUrl],
    ['Certificate', `valid until ${new Date(certificate.validTo).toISOString()}`],
    ['Config', !stored ? 'none yet' : stored.ok ? `version ${stored.config.version}, ${stored.config.users.length} users, unlock time ${stored.config.unlockTime} s` : `not usable: ${stored.reason}`],
    ['Events', `${await countUndelivered(state)} waiting to be delivered to the platform`],
    ['Offline codes', files.offlineCodeSecret ? 'accepted (the secret from provisioning is stored)' : 'not accepted: provisioned without an offline-code secret'],
    ['Agent', !running ? 'not running' : running.command === 'execute' ? `execute running (pid ${running.pid})` : `running (pid ${running.pid}${running.httpPort ? `, local endpoint on port ${running.httpPort}` : ', no local endpoint'})`],
    ['State dir', state.dir],
  ];
  for (const [name, value] of lines) console.log(`${`${name}:`.padEnd(15)}${value}`);
}
