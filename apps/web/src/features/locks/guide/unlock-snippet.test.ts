import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXAMPLE_SCRIPT, SETUP_LINE_COUNT, unlockCommand } from './unlock-snippet';

describe('unlockCommand with a co-owner’s hostile values', () => {
  const values = {
    apiBase: 'http://localhost:3000/api',
    scriptUrl: "http://localhost:3000/assets/x'$(touch /tmp/pwned)'.mjs",
    keyFile: './latchkey-k1.private.jwk.json',
    issuer: "https://auth.acme.test/'$(touch /tmp/pwned)'",
    kid: "k1'\ntouch /tmp/pwned\n\x03\x1b[201~touch /tmp/pwned\t\u2028`id`",
    audience: 'https://aud.test',
    lockId: 'lock-1',
    userEmail: 'alice@example.com',
  };

  it('pastes no raw control character and hands the script exactly the stored values', () => {
    const command = unlockCommand(values);
    // Only printable text, spaces and line feeds: nothing a terminal acts on (Ctrl-C, Tab, ESC …).
    expect(command).not.toMatch(/[^\P{C}\n]|[\u2028\u2029]/u);
    // Run it as a shell would, with the folder, install and fetch skipped and the script replaced by printing its input.
    const script = command
      .split('\n')
      .slice(SETUP_LINE_COUNT)
      .join('\n')
      .replace(`node ${EXAMPLE_SCRIPT}`, `node -e 'process.stdout.write(JSON.stringify([process.env.KEY_ID, process.env.ISSUER]))'`);
    for (const shell of ['sh', 'bash']) {
      const out = execFileSync(shell, ['-c', script], { encoding: 'utf8' });
      expect(JSON.parse(out), shell).toEqual([values.kid, values.issuer]);
    }
  });
});

describe('unlockCommand runs the example in a folder of its own', () => {
  it('installs jose and fetches the script inside latchkey-unlock, leaving the reader’s folder alone; a failed step stops the rest', () => {
    const project = fs.mkdtempSync(path.join(os.tmpdir(), 'reader-project-'));
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-bin-'));
    const log = path.join(bin, 'log');
    // npm, curl and node that only say where they ran and with what.
    for (const tool of ['npm', 'curl', 'node']) {
      fs.writeFileSync(path.join(bin, tool), `#!/bin/sh\necho "${tool} $PWD $*" >> ${log}\n`, { mode: 0o755 });
    }
    const command = unlockCommand({
      apiBase: 'http://localhost:3000/api',
      scriptUrl: 'http://localhost:3000/assets/unlock-from-backend-abc.mjs',
      keyFile: './latchkey-k1.private.jwk.json',
      issuer: 'https://auth.acme.test',
      kid: 'k1',
      audience: 'https://aud.test',
      lockId: 'lock-1',
      userEmail: 'alice@example.com',
    });
    execFileSync('sh', ['-c', command], { cwd: project, env: { PATH: `${bin}:/usr/bin:/bin` } });
    const folder = path.join(fs.realpathSync(project), 'latchkey-unlock');
    expect(fs.readFileSync(log, 'utf8').trim().split('\n')).toEqual([
      `npm ${folder} init -y`,
      `npm ${folder} install jose`,
      `curl ${folder} -fsSLo unlock-from-backend.mjs http://localhost:3000/assets/unlock-from-backend-abc.mjs`,
      `node ${folder} unlock-from-backend.mjs`,
    ]);
    expect(fs.readdirSync(project)).toEqual(['latchkey-unlock']);

    // A fetch that fails runs nothing after it.
    fs.writeFileSync(path.join(bin, 'curl'), '#!/bin/sh\nexit 22\n', { mode: 0o755 });
    fs.rmSync(log);
    expect(() => execFileSync('sh', ['-c', command], { cwd: project, env: { PATH: `${bin}:/usr/bin:/bin` }, stdio: 'pipe' })).toThrow();
    expect(fs.readFileSync(log, 'utf8')).not.toContain('node ');
  });
});
