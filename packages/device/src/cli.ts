#!/usr/bin/env node
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { MAX_DIRECT_ACCESS_ENDPOINTS, MAX_FIRMWARE_LENGTH } from '@latchkey/contract';
import packageJson from '../package.json' with { type: 'json' };
import { splitCommand } from './argv.js';
import { executeCommand, provisionCommand, runCommand, statusCommand } from './cli-commands.js';
import { StateDir, UserError } from './state-dir.js';

const USAGE = `latchkey-device ${packageJson.version}: a Latchkey lock controller

  latchkey-device provision --api <url> --code <code> [--dir <dir>]
      Make this device's key, send its certificate request with the provisioning code from the lock's
      page, and store what comes back. <url> is the API base, e.g. https://latchkey.example.com/api.
  latchkey-device run [--dir <dir>] [--actuator virtual|command] [--unlock-command "<cmd>"]
                      [--lock-command "<cmd>"] [--http-port <n>] [--http-host <ip>]
                      [--advertise <url>]... [--firmware <text>] [--keypad stdin]
                      [--door-sensor "<cmd>"] [--battery "<cmd>"] [--battery-interval <s>]
      Connect to the platform and obey the operations it relays; with --http-port, also take signed
      operations on POST /execute from the local network.
      --keypad stdin        read access codes one a line from standard input; each is answered on
                            standard output with DONE or REFUSED <reason> (the log goes to stderr).
      --door-sensor "<cmd>" run <cmd> and read its lines: open / closed become door events (jammed /
                            tampered alarms); it is started again 5 s after it ends.
      --battery "<cmd>"     run <cmd> and read its lines as battery levels (0-100); a command that
                            prints and exits is run again every --battery-interval seconds (300).
  latchkey-device execute <jws> [--dir <dir>] [--actuator … as for run]
      Decide one signed operation from the stored config, or hand it to the running \`run\` when it
      serves a local endpoint. Prints DONE, or REFUSED and the reason; exits 0 or 1.
  latchkey-device status [--dir <dir>]

The state directory defaults to ~/.latchkey-device.`;

const OPTIONS = {
  dir: { type: 'string' },
  api: { type: 'string' },
  code: { type: 'string' },
  actuator: { type: 'string' },
  'unlock-command': { type: 'string' },
  'lock-command': { type: 'string' },
  'http-port': { type: 'string' },
  'http-host': { type: 'string' },
  advertise: { type: 'string', multiple: true },
  firmware: { type: 'string' },
  keypad: { type: 'string' },
  'door-sensor': { type: 'string' },
  battery: { type: 'string' },
  'battery-interval': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} satisfies ParseArgsConfig['options'];

async function main(argv: string[]): Promise<number> {
  if (Number(process.versions.node.split('.')[0]) < 22) throw new UserError(`latchkey-device needs Node.js 22 or newer (this is ${process.version})`);
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UserError(`${(error as Error).message}\n\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.version) return print(packageJson.version);
  if (values.help || !command || command === 'help') return print(USAGE);
  const state = new StateDir(values.dir);
  const actuator = { actuator: values.actuator, unlockCommand: values['unlock-command'], lockCommand: values['lock-command'] };
  const extra = (count: number) => {
    if (rest.length > count) throw new UserError(`Unexpected argument: ${rest[count]}\n\n${USAGE}`);
  };
  switch (command) {
    case 'provision':
      extra(0);
      if (!values.api || !values.code) throw new UserError('provision needs --api <url> and --code <code> (the code is shown on the lock’s page under "Connect a device")');
      await provisionCommand(state, values.api, values.code);
      return 0;
    case 'run':
      extra(0);
      if (values.firmware !== undefined && (values.firmware.length === 0 || values.firmware.length > MAX_FIRMWARE_LENGTH))
        throw new UserError(`--firmware must be 1 to ${MAX_FIRMWARE_LENGTH} characters`);
      checkAdvertised(values.advertise ?? []);
      if (values.keypad !== undefined && values.keypad !== 'stdin') throw new UserError(`--keypad takes stdin: codes one a line on standard input (got ${values.keypad})`);
      await runCommand(state, {
        ...actuator,
        firmware: values.firmware ?? `latchkey-device ${packageJson.version}`,
        httpPort: port(values['http-port']),
        httpHost: values['http-host'],
        advertise: values.advertise,
        keypad: values.keypad,
        doorSensor: watcher('--door-sensor', values['door-sensor']),
        battery: watcher('--battery', values.battery),
        batteryIntervalS: interval(values['battery-interval']),
      });
      return 0;
    case 'execute':
      extra(1);
      if (!rest[0]) throw new UserError('execute needs the signed operation: latchkey-device execute <jws>');
      return executeCommand(state, rest[0], actuator);
    case 'status':
      extra(0);
      await statusCommand(state);
      return 0;
    default:
      throw new UserError(`Unknown command: ${command}\n\n${USAGE}`);
  }
}

function port(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value > 65_535) throw new UserError(`--http-port must be a port number from 0 to 65535 (got ${text})`);
  return value;
}

/** A watcher program's command line: split as the program will be run, so a bad one is refused before the agent starts. */
function watcher(flag: string, command: string | undefined): string | undefined {
  if (command === undefined) return undefined;
  try {
    splitCommand(command);
  } catch (error) {
    throw new UserError(`${flag} must be a program and its arguments, e.g. ${flag} "/usr/local/bin/door-sensor.sh" (${(error as Error).message})`);
  }
  return command;
}

function interval(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < 10 || value > 86_400) throw new UserError(`--battery-interval must be a number of seconds from 10 to 86400 (got ${text})`);
  return value;
}

/** The announced endpoints: at most four http(s) URLs, as the platform takes them. */
function checkAdvertised(urls: string[]): void {
  if (urls.length > MAX_DIRECT_ACCESS_ENDPOINTS) throw new UserError(`At most ${MAX_DIRECT_ACCESS_ENDPOINTS} --advertise URLs`);
  for (const url of urls) {
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) throw new UserError(`--advertise must be an http:// or https:// URL such as http://192.168.1.20:8080/execute (got ${url})`);
  }
}

function print(text: string): number {
  console.log(text);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    // A problem the user can fix is its message alone; anything else also says what failed, without a stack.
    console.error(error instanceof UserError ? error.message : `latchkey-device failed: ${(error as Error).message ?? String(error)}`);
    process.exitCode = error instanceof UserError ? 2 : 1;
  },
);
