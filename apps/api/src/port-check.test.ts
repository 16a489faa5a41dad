import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtService } from '../test/fixtures/built-service.js';
import { checkPorts, PortError } from './port-check.js';

/** The service as `npm start` starts it (the built main.js), with these variables. */
async function startService(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const main = await builtService();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'latchkey-ports-'));
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [main],
      { env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0', MQTT_PORT: '0', LOG_LEVEL: 'silent', ...env }, timeout: 50_000 },
      (_error, stdout, stderr) => {
        fs.rmSync(dataDir, { recursive: true, force: true });
        resolve({ code: child.exitCode, stdout, stderr });
      },
    );
  });
}

/** A port this test holds for the whole file, as another program would. */
let held: net.Server;
let busy: number;
beforeAll(async () => {
  held = net.createServer();
  await new Promise<void>((resolve) => held.listen({ host: '127.0.0.1', port: 0 }, () => resolve()));
  busy = (held.address() as net.AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => held.close(() => resolve())));

describe('a busy port at start-up', () => {
  // Each start is a process of its own that mostly waits: the three run side by side.
  it.concurrent.each(['PORT', 'MQTT_PORT', 'METRICS_PORT'])('%s: one line naming the variable to change, exit 1, no stack', async (variable) => {
    const { code, stdout, stderr } = await startService({ [variable]: String(busy) });
    expect(code).toBe(1);
    const lines = stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`Port ${busy} (${variable}) is already in use`);
    expect(lines[0]).toContain(`set ${variable} to a free port`);
    expect(stderr).not.toMatch(/^\s+at /m);
    expect(stderr).not.toContain('EADDRINUSE');
    // Nothing started: no portal line, no database made.
    expect(stdout).not.toContain('Latchkey portal');
  });

  it('two variables with the same port are named together', async () => {
    await expect(
      checkPorts([
        { variable: 'PORT', host: '127.0.0.1', port: 40_123 },
        { variable: 'MQTT_PORT', host: '127.0.0.1', port: 40_123 },
      ]),
    ).rejects.toThrow(new PortError('PORT and MQTT_PORT are both 40123: set MQTT_PORT to another port'));
  });

  it('free ports pass, and are free again afterwards', async () => {
    const ports = [{ variable: 'PORT' as const, host: '127.0.0.1', port: 0 }];
    await expect(checkPorts(ports)).resolves.toBeUndefined();
    await expect(checkPorts([{ variable: 'METRICS_PORT', host: '127.0.0.1', port: busy }])).rejects.toBeInstanceOf(PortError);
  });
});
