import { shellWord } from '../../../lib/code-literals';

/** The package a device runs, from npm, and the command it installs. */
export const DEVICE_PACKAGE = '@latchkey/device';
/**
 * The relay on a Raspberry Pi: GPIO 17 of the first GPIO chip, high to unlock and low to lock. Plain words
 * only, so they stand inside double quotes as they are.
 */
export const UNLOCK_COMMAND = 'gpioset gpiochip0 17=1';
export const LOCK_COMMAND = 'gpioset gpiochip0 17=0';

/**
 * Node.js 22 from NodeSource with gpiod (its gpioset drives the relay), then the device package from npm:
 * on Raspberry Pi OS (Debian), whose own Node.js is older.
 */
export const INSTALL_COMMAND = [
  'curl -fsSL https://deb.nodesource.com/setup_22.x | sudo -E bash - &&',
  'sudo apt-get install -y nodejs gpiod &&',
  `sudo npm install -g ${DEVICE_PACKAGE}`,
].join('\n');

/** The shell lines for a Raspberry Pi: install Node.js 22 and the device package, provision, run. */
export interface DeviceCommands {
  install: string;
  provision: string;
  run: string;
}

/**
 * The commands a Raspberry Pi runs to become this lock: the install, provisioning with the one-time code
 * against this portal's API, and the device itself with the relay commands.
 */
export function deviceCommands(apiBase: string, code: string): DeviceCommands {
  return {
    install: INSTALL_COMMAND,
    provision: `latchkey-device provision --api ${shellWord(apiBase)} --code ${shellWord(code)}`,
    run: `latchkey-device run --actuator command --unlock-command "${UNLOCK_COMMAND}" --lock-command "${LOCK_COMMAND}"`,
  };
}
