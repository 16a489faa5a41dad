import { shellWord } from '../../../lib/code-literals';

/**
 * The relay on a Raspberry Pi: GPIO 17 of the first GPIO chip, high to unlock and low to lock. Plain words
 * only, so they stand inside double quotes as they are.
 */
export const UNLOCK_COMMAND = 'gpioset gpiochip0 17=1';
export const LOCK_COMMAND = 'gpioset gpiochip0 17=0';

/**
 * Node.js 22 from NodeSource with gpiod (its gpioset drives the relay), then the device package from this
 * platform (`packageUrl`: <PUBLIC_URL>/downloads/latchkey-device.tgz, built with the service): on Raspberry
 * Pi OS (Debian), whose own Node.js is older.
 */
export function installCommand(packageUrl: string): string {
  return [
    'curl -fsSL https://deb.nodesource.com/setup_22.x | sudo -E bash - &&',
    'sudo apt-get install -y nodejs gpiod &&',
    `sudo npm install -g ${shellWord(packageUrl)}`,
  ].join('\n');
}

/** The shell lines for a Raspberry Pi: install Node.js 22 and the device package, provision, run. */
export interface DeviceCommands {
  install: string;
  provision: string;
  run: string;
}

/**
 * The commands a Raspberry Pi runs to become this lock: the install from this platform, provisioning with
 * the one-time code against its API, and the device itself with the relay commands.
 */
export function deviceCommands(apiBase: string, code: string, packageUrl: string): DeviceCommands {
  return {
    install: installCommand(packageUrl),
    provision: `latchkey-device provision --api ${shellWord(apiBase)} --code ${shellWord(code)}`,
    run: `latchkey-device run --actuator command --unlock-command "${UNLOCK_COMMAND}" --lock-command "${LOCK_COMMAND}"`,
  };
}
