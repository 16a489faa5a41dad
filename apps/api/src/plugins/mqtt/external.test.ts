import net from 'node:net';
import { Aedes } from 'aedes';
import mqtt from 'mqtt';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../../../test/helpers.js';
import { ExternalBus } from './external.js';

const TOPIC = 'latchkey/d/+/state';
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (stops.length) await stops.pop()!();
});

/** A broker that refuses the first `refusals` subscriptions to TOPIC, as a cluster without its quorum does. */
async function refusingBroker(refusals: number): Promise<{ url: string; asked: () => number }> {
  let asked = 0;
  const broker = await Aedes.createBroker({
    authorizeSubscribe: (_client, subscription, done) => {
      if (subscription.topic !== TOPIC) return done(null, subscription);
      asked += 1;
      done(null, asked <= refusals ? null : subscription);
    },
  });
  const server = net.createServer(broker.handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  stops.push(async () => {
    await new Promise<void>((resolve) => broker.close(() => resolve()));
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `mqtt://127.0.0.1:${(server.address() as net.AddressInfo).port}`, asked: () => asked };
}

/** Publishes a device's state until the service hears it (the broker may not have its subscription yet). */
async function heard(url: string, clientId: string, payload: string, received: string[]): Promise<boolean> {
  const device = await mqtt.connectAsync(url, { clientId });
  stops.push(() => device.endAsync(true));
  return eventually(async () => {
    await device.publishAsync(`latchkey/d/${clientId}/state`, payload, { qos: 1 });
    return received.includes(payload);
  }, 10_000);
}

describe('the service on an external broker', () => {
  it('asks again for a subscription the broker refused while it was connecting, until it is granted, and hears the devices then', async () => {
    const broker = await refusingBroker(2);
    const client = mqtt.connect(broker.url, { reconnectPeriod: 100 });
    const bus = ExternalBus.over(client, pino({ level: 'silent' }));
    stops.push(() => bus.close());
    // Subscribed before the connection is up, as the service does at its start.
    const received: string[] = [];
    await bus.subscribe(TOPIC, (_topic, payload) => received.push(payload.toString()));
    expect(client.connected).toBe(false);
    expect(await heard(broker.url, 'device-1', 'locked', received)).toBe(true);
    expect(broker.asked()).toBe(3);
  });

  it('asks again for a subscription refused once connected, though the caller is told of the refusal', async () => {
    const broker = await refusingBroker(1);
    const client = await mqtt.connectAsync(broker.url);
    const bus = ExternalBus.over(client, pino({ level: 'silent' }));
    stops.push(() => bus.close());
    const received: string[] = [];
    await expect(bus.subscribe(TOPIC, (_topic, payload) => received.push(payload.toString()))).rejects.toThrow(/subscribe error/i);
    expect(await heard(broker.url, 'device-2', 'open', received)).toBe(true);
    expect(broker.asked()).toBe(2);
  });
});
