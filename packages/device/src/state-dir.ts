import { randomUUID } from 'node:crypto';
import { appendFile, chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';

/**
 * Everything a device keeps, in one directory (default `~/.latchkey-device`, mode 0700): who it is,
 * its private key (PKCS#8 PEM, mode 0600, never sent anywhere), its certificate, the CAs it trusts, the
 * last config the platform signed (so it keeps deciding after a restart without the network) and the
 * operations it has obeyed recently (so one cannot be used again through another path), and the outcomes
the platform has not been told yet. Each file is
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
  agent: 'agent.json',
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
    await writeFile(temporary, content, { mode });
    await chmod(temporary, mode);
    await rename(temporary, target);
  }

  /** Adds to the end of a journal file (made with `mode` when it is new). */
  async append(name: FileName, content: string, mode = 0o644): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await appendFile(this.file(name), content, { mode });
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

/** What a provisioned device loads to run. */
export interface DeviceFiles {
  identity: DeviceIdentity;
  keyPem: string;
  certificatePem: string;
  deviceCaPem: string;
  platformCaPem: string;
  configJws: string | null;
}

/** Reads a provisioned device's files; throws a message naming the command to run when it is not provisioned. */
export async function loadDevice(state: StateDir): Promise<DeviceFiles> {
  const [identity, keyPem, certificatePem, deviceCaPem, platformCaPem, configJws] = await Promise.all([
    state.readIdentity(),
    state.read('key'),
    state.read('certificate'),
    state.read('deviceCa'),
    state.read('platformCa'),
    state.read('config'),
  ]);
  if (!identity || !keyPem || !certificatePem || !deviceCaPem || !platformCaPem)
    throw new UserError(`This device is not provisioned (nothing in ${state.dir}): run latchkey-device provision --api <url> --code <code> first`);
  return { identity, keyPem, certificatePem, deviceCaPem, platformCaPem, configJws };
}

/** A problem the person at the device can fix: printed as its message alone, never with a stack trace. */
export class UserError extends Error {}
