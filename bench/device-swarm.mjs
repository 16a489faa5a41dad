// One process of idle devices for the fleet benches: `node bench/device-swarm.mjs <devices.json>`, started
// with an IPC channel. The file holds [{deviceId, key, cert}] (PEM) and the broker's {url, ca}; each device
// connects with its own certificate over TLS as a device does (clientId = its id, Last Will `offline`, its
// config, op and certificate topics subscribed, then presence `online` retained), then sits idle.
// Like the device's agent (packages/device/src/agent.ts), a device whose connection fails or drops tries
// again after the agent's backoff (reconnect-policy.ts), and gives up only after 5 refusals as not
// authorized in a row. The first connects are started SWARM_CONCURRENCY at a time (default 50), or at
// SWARM_RATE a second when set; the reconnects are each device's own.
// A device counts as connected from its CONNACK. Reports { connected, ever, failed, retries, refusals, errors } to the parent every 250 ms, { done } once
// every device has connected once or given up; 'stop' ends every connection and exits.
import fs from 'node:fs';
import { clearInterval, setInterval } from 'node:timers';
import mqtt from 'mqtt';
import { reconnectDelayMs } from '../packages/device/src/reconnect-policy.ts';

const { url, ca, devices } = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const CONCURRENT_CONNECTS = Number(process.env.SWARM_CONCURRENCY ?? 50);
const RATE = Number(process.env.SWARM_RATE ?? 0);
/** The agent's: a device refused as not authorized this often in a row stops (it was unbound). */
const MAX_NOT_AUTHORIZED = 5;
const NOT_AUTHORIZED_CODES = new Set([4, 5]);

let connected = 0;
let ever = 0;
let gaveUp = 0;
let retries = 0;
/** CONNACK refusals by return code. */
const refusals = {};
/** Connection errors by code or message. */
const errors = {};
const clients = [];
let stopping = false;

function startDevice({ deviceId, key, cert }) {
  return new Promise((resolveFirst) => {
    const topic = (t) => `latchkey/d/${deviceId}/${t}`;
    let failures = 0;
    let notAuthorized = 0;
    let timer = null;
    let first = true;
    const settleFirst = () => {
      if (!first) return;
      first = false;
      resolveFirst();
    };
    const client = mqtt.connect(url, {
      clientId: deviceId,
      key,
      cert,
      ca,
      rejectUnauthorized: true,
      protocolVersion: 4,
      clean: true,
      // Idle devices: the broker would hear a PINGREQ every keepalive; a long one keeps the bench's
      // two cores for the service.
      keepalive: 300,
      reconnectPeriod: 0,
      connectTimeout: 15_000,
      will: { topic: topic('presence'), payload: Buffer.from('offline'), qos: 1, retain: true },
    });
    clients.push(client);
    let online = false;
    const schedule = () => {
      if (stopping || timer || client.disconnecting) return;
      const delay = reconnectDelayMs(failures);
      failures++;
      timer = setTimeout(() => {
        timer = null;
        if (stopping || client.connected) return;
        retries++;
        client.reconnect();
      }, delay);
    };
    client.on('error', (err) => {
      const code = err?.code;
      if (typeof code === 'number') {
        refusals[code] = (refusals[code] ?? 0) + 1;
        if (NOT_AUTHORIZED_CODES.has(code) && ++notAuthorized >= MAX_NOT_AUTHORIZED) {
          gaveUp++;
          client.end(true);
          settleFirst();
          return;
        }
      } else {
        const m = String(code ?? err?.message ?? err).slice(0, 80);
        errors[m] = (errors[m] ?? 0) + 1;
      }
    });
    client.on('close', () => {
      if (online) {
        online = false;
        connected--;
      }
      if (notAuthorized >= MAX_NOT_AUTHORIZED) return;
      schedule();
    });
    // Connected once the broker has admitted it (CONNACK); then, as the agent, it subscribes before saying
    // online, so the config the platform answers with arrives.
    client.on('connect', () => {
      failures = 0;
      notAuthorized = 0;
      if (!online) {
        online = true;
        connected++;
        if (first) ever++;
      }
      settleFirst();
      client
        .subscribeAsync([topic('config'), topic('op'), topic('certificate')], { qos: 1 })
        .then(() => client.publishAsync(topic('presence'), 'online', { qos: 1, retain: true }))
        .catch(() => {}); // the connection dropped meanwhile: 'close' tries again
    });
  });
}

const report = (extra = {}) => process.send?.({ connected, ever, failed: gaveUp, retries, refusals, errors, ...extra });
const timer = setInterval(report, 250);
let next = 0;
if (RATE > 0) {
  const started = Date.now();
  const firsts = [];
  while (next < devices.length) {
    const due = started + (next * 1000) / RATE;
    const wait = due - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    firsts.push(startDevice(devices[next++]));
  }
  await Promise.all(firsts);
} else {
  await Promise.all(
    Array.from({ length: CONCURRENT_CONNECTS }, async () => {
      while (next < devices.length) await startDevice(devices[next++]);
    }),
  );
}
report({ done: true });
clearInterval(timer);
setInterval(report, 250);
process.on('message', async (m) => {
  if (m === 'stop') {
    stopping = true;
    await Promise.all(clients.map((c) => c.endAsync(true).catch(() => {})));
    process.exit(0);
  }
});
