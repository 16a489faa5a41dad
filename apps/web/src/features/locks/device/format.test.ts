import { describe, expect, it } from 'vitest';
import { deviceCommands } from './device-commands';
import { formatAgo, formatCountdown } from './format';

const PACKAGE = 'https://portal.example/downloads/latchkey-device.tgz';

describe('device texts', () => {
  it('say how long ago through Intl, in the reader’s language', () => {
    const now = Date.UTC(2026, 0, 1, 12);
    expect(formatAgo(now / 1000 - 3, now, 'en')).toBe('now');
    expect(formatAgo(now / 1000 - 42, now, 'en')).toBe('42 seconds ago');
    expect(formatAgo(now / 1000 - 5 * 60, now, 'en')).toBe('5 minutes ago');
    expect(formatAgo(now / 1000 - 2 * 3600, now, 'de')).toBe('vor 2 Stunden');
    expect(formatAgo(now / 1000 - 86_400, now, 'en')).toBe('yesterday');
  });

  it('count down in minutes and seconds', () => {
    expect(formatCountdown(900)).toBe('15:00');
    expect(formatCountdown(65.7)).toBe('1:05');
    expect(formatCountdown(-3)).toBe('0:00');
  });

  it('put the API base and the code into the provision command as single shell words', () => {
    expect(deviceCommands('https://portal.example/api', 'AB12-CD34', PACKAGE).provision).toBe(
      'latchkey-device provision --api https://portal.example/api --code AB12-CD34',
    );
    expect(deviceCommands('https://portal.example/api', "x'; rm -rf ~ #", PACKAGE).provision).toBe(
      "latchkey-device provision --api https://portal.example/api --code 'x'\\''; rm -rf ~ #'",
    );
  });

  it('install the device package from the URL this platform serves it at, not from the npm registry', () => {
    expect(
      deviceCommands('https://portal.example/api', 'AB12-CD34', PACKAGE).install.split('\n').at(-1),
    ).toBe('sudo npm install -g https://portal.example/downloads/latchkey-device.tgz');
  });
});
