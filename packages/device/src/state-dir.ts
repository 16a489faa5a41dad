import { randomUUID } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';

/**
 * Everything a device keeps, in one directory (default `~/.latchkey-device`, mode 0700): who it is,
 * its private key (PKCS#8 PEM, mode 0600, never sent anywhere), its certificate, the CAs it trusts, the
 * last config the platform signed (so it keeps deciding after a restart without the network) and the
 * operations it has obeyed recently (so one cannot be used again through another path), and the outcomes
 * the platform has not been told yet, its signed event chain and the events not delivered yet
 * (`events.log`, `event-chain.json`), the offline-code secret (`offline-code-secret`, mode 0600), the
 * keypad's recent wrong codes, lockout and its escalation (`keypad.json`), and
 * `device.lock` while a process uses it. Each file is
 * written to a temporary name and renamed, so a power cut leaves the old file or the new one.
 */

export const defaultStateDir = () => path.join(homedir(), '.latchkey-device');

export interface DeviceIdentity {
  deviceId: string;
  lockId: string;
  mqttUrl: string;
  topicPrefix: string;
  /** The API base the device was provisioned from (with its prefix, e.g. https://host/api). */
  apiUrl: string;
}

const FILES = {
  identity: 'device.json',
  key: 'key.pem',
  pendingKey: 'key.next.pem',
  certificate: 'certificate.pem',
  deviceCa: 'device-ca.pem',
  platformCa: 'platform-ca.pem',
  config: 'config.jws',
  replay: 'replay.json',
  replayJournal: 'replay.log',
  results: 'pending-results.json',
  lock: 'device.lock',
  events: 'events.log',
  eventChain: 'event-chain.json',
  offlineCodeSecret: 'offline-code-secret',
  keypad: 'keypad.json',
} as const;
type FileName = keyof typeof FILES;

export class StateDir {
  constructor(readonly dir: string = defaultStateDir()) {}

  file(name: FileName): string {
    return path.join(this.dir, FILES[name]);
  }

  async write(name: FileName, content: string, mode = 0o644): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const target = this.file(name);
    const temporary = `${target}.${process.pid}.${randomUUID()}.tmp`;
    // On disk before it takes the old file's place: a power cut leaves one or the other, never an empty file.
    const handle = await open(temporary, 'w', mode);
    try {
      await handle.writeFile(content);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await chmod(temporary, mode);
    await rename(temporary, target);
  }

  /**
   * Adds to the end of a journal file (made with `mode` when it is new) and waits until the disk has it
   * (fsync): what it records survives a power cut or a kill the moment it returns.
   */
  async append(name: FileName, content: string, mode = 0o644): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const handle = await open(this.file(name), 'a', mode);
    try {
      await handle.appendFile(content);
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  /**
   * Takes this directory for one process (`device.lock`, made exclusively, holding the pid and what the
   * holder serves): a lock's replay cache is in one process only, so an operation it obeyed is refused on
   * every path. A lock file whose process is gone is taken over. Answers null when taken, else the holder.
   */
  async take(holder: DirectoryHolder): Promise<DirectoryHolder | null> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await writeFile(this.file('lock'), JSON.stringify(holder), { flag: 'wx', mode: 0o600 });
        return null;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const current = await this.holder();
      if (current) return current;
      // Its process is gone: take it over.
      await this.remove('lock');
    }
    throw new UserError(`Could not take ${this.file('lock')}: another latchkey-device keeps taking it`);
  }

  /** Says what the holder now serves (its local endpoint's port). */
  async updateHolder(holder: DirectoryHolder): Promise<void> {
    await this.write('lock', JSON.stringify(holder), 0o600);
  }

  /** The process holding this directory, if one is alive. */
  async holder(): Promise<DirectoryHolder | null> {
    let text: string | null;
    try {
      text = await this.read('lock');
    } catch {
      return null;
    }
    if (!text) return null;
    try {
      const holder = JSON.parse(text) as DirectoryHolder;
      return typeof holder.pid === 'number' && isAlive(holder.pid) ? holder : null;
    } catch {
      return null;
    }
  }

  /** Lets the directory go, if `holder` holds it. */
  async release(holder: Pick<DirectoryHolder, 'token'>): Promise<void> {
    const current = await this.holder();
    if (current?.token === holder.token) await this.remove('lock');
  }

  /** The file's text, or null when it does not exist. */
  async read(name: FileName): Promise<string | null> {
    try {
      return await readFile(this.file(name), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async remove(name: FileName): Promise<void> {
    await rm(this.file(name), { force: true });
  }

  /** Moves the key made for a renewal into place once its certificate has arrived. */
  async promotePendingKey(): Promise<void> {
    await rename(this.file('pendingKey'), this.file('key'));
  }

  async readIdentity(): Promise<DeviceIdentity | null> {
    const text = await this.read('identity');
    return text === null ? null : (JSON.parse(text) as DeviceIdentity);
  }
}

/** The process using a device directory: `run` (with its local endpoint's port, when it serves one) or `execute`. */
export interface DirectoryHolder {
  pid: number;
  /** Which taker in the process: a second agent in the same process is refused too. */
  token: string;
  command: 'run' | 'execute';
  httpPort: number | null;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** What a provisioned device loads to run. */
export interface DeviceFiles {
  identity: DeviceIdentity;
  keyPem: string;
  certificatePem: string;
  deviceCaPem: string;
  platformCaPem: string;
  configJws: string | null;
  /** The offline-code secret (base64url) from provisioning; null when the platform gave none. Never logged. */
  offlineCodeSecret: string | null;
}

/** Reads a provisioned device's files; throws a message naming the command to run when it is not provisioned. */
export async function loadDevice(state: StateDir): Promise<DeviceFiles> {
  const [identity, keyPem, certificatePem, deviceCaPem, platformCaPem, configJws, offlineCodeSecret] = await Promise.all([
    state.readIdentity(),
    state.read('key'),
    state.read('certificate'),
    state.read('deviceCa'),
    state.read('platformCa'),
    state.read('config'),
    state.read('offlineCodeSecret'),
  ]);
  if (!identity || !keyPem || !certificatePem || !deviceCaPem || !platformCaPem)
    throw new UserError(`This device is not provisioned (nothing in ${state.dir}): run latchkey-device provision --api <url> --code <code> first`);
  return { identity, keyPem, certificatePem, deviceCaPem, platformCaPem, configJws, offlineCodeSecret: offlineCodeSecret?.trim() || null };
}

/** A problem the person at the device can fix: printed as its message alone, never with a stack trace. */
export class UserError extends Error {}
