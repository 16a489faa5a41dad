import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { EXAMPLE_SCRIPT, unlockCommand } from './unlock-snippet';

describe('unlockCommand with a co-owner’s hostile values (issue 26 item 10)', () => {
  const values = {
    apiBase: 'http://localhost:3000/api',
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
    // Run it as a shell would, with the install skipped and the script replaced by printing its input.
    const script = command
      .replace('npm install jose\n', '')
      .replace(`node ${EXAMPLE_SCRIPT}`, `node -e 'process.stdout.write(JSON.stringify([process.env.KEY_ID, process.env.ISSUER]))'`);
    for (const shell of ['sh', 'bash']) {
      const out = execFileSync(shell, ['-c', script], { encoding: 'utf8' });
      expect(JSON.parse(out), shell).toEqual([values.kid, values.issuer]);
    }
  });
});
