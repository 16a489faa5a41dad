// One process of idle devices for bench/devices.mjs: `node bench/device-swarm.mjs <devices.json>`, started
// with an IPC channel. The file holds [{deviceId, key, cert}] (PEM) and the broker's {url, ca}; each device
// connects with its own certificate over TLS as a device does (clientId = its id, Last Will `offline`,
// presence `online` retained, its config, op and certificate topics subscribed), then sits idle.
// Reports { connected, failed, errors } to the parent as it goes and { done } at the end; exits on 'stop'.
import fs from 'node:fs';
import { clearInterval, setInterval } from 'node:timers';
import mqtt from 'mqtt';

const { url, ca, devices } = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const CONCURRENT_CONNECTS = Number(process.env.SWARM_CONCURRENCY ?? 50);
const clients = [];
let connected = 0;
let failed = 0;
const errors = new Map();

function connectOne({ deviceId, key, cert }) {
  return new Promise((resolve) => {
    const topic = (t) => `latchkey/d/${deviceId}/${t}`;
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
      connectTimeout: 60_000,
      will: { topic: topic('presence'), payload: Buffer.from('offline'), qos: 1, retain: true },
    });
    let settled = false;
    const fail = (err) => {
      if (settled) return;
      settled = true;
      failed++;
      const m = String(err?.code ?? err?.message ?? err).slice(0, 80);
      errors.set(m, (errors.get(m) ?? 0) + 1);
      client.end(true);
      resolve();
    };
    client.once('error', fail);
    client.once('close', () => fail(new Error('closed before CONNACK')));
    client.once('connect', async () => {
      try {
        await client.publishAsync(topic('presence'), 'online', { qos: 1, retain: true });
        await client.subscribeAsync([topic('config'), topic('op'), topic('certificate')], { qos: 1 });
        if (settled) return;
        settled = true;
        client.removeAllListeners('error');
        client.removeAllListeners('close');
        client.on('error', () => {});
        client.on('close', () => connected--);
        connected++;
        clients.push(client);
        resolve();
      } catch (err) {
        fail(err);
      }
    });
  });
}

const report = () => process.send?.({ connected, failed, errors: Object.fromEntries(errors) });
const timer = setInterval(report, 1000);
let next = 0;
await Promise.all(
  Array.from({ length: CONCURRENT_CONNECTS }, async () => {
    while (next < devices.length) await connectOne(devices[next++]);
  }),
);
clearInterval(timer);
report();
process.send?.({ done: true, connected, failed, errors: Object.fromEntries(errors) });
setInterval(report, 5000);
process.on('message', async (m) => {
  if (m === 'stop') {
    await Promise.all(clients.map((c) => c.endAsync(true).catch(() => {})));
    process.exit(0);
  }
});
