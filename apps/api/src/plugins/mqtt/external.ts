import { randomBytes } from 'node:crypto';
import { rootCertificates } from 'node:tls';
import mqtt, { type MqttClient } from 'mqtt';
import type { FastifyBaseLogger } from 'fastify';
import type { DeviceAuthority } from './authority.js';
import type { DeviceBus } from './bus.js';
import { topicMatches } from './topic-match.js';

/** A refused subscription is asked for again after this long, doubling up to the most. */
const RESUBSCRIBE_FIRST_MS = 500;
const RESUBSCRIBE_MAX_MS = 30_000;

/** The service's client ids on the broker: each instance its own. */
const SERVICE_CLIENT_PREFIX = 'latchkey-service-';

/**
 * A client of the external broker MQTT_URL (Mosquitto, EMQX, HiveMQ …): every instance connects with its own
 * service certificate (CN=latchkey-service, from the device CA), and the broker fans messages out. The broker
 * itself checks devices (require_certificate, use_identity_as_username, an ACL pattern and the CRL).
 */
export class ExternalBus implements DeviceBus {
  readonly kind = 'external';
  private readonly handlers: { filter: string; handler: (topic: string, payload: Buffer) => void }[] = [];
  private closed = false;

  private constructor(
    private readonly client: MqttClient,
    private readonly log: FastifyBaseLogger,
  ) {
    client.on('message', (topic, payload) => {
      for (const { filter, handler } of this.handlers) {
        if (!topicMatches(filter, topic)) continue;
        try {
          handler(topic, payload);
        } catch (err) {
          log.error({ err, topic }, 'device message handler failed');
        }
      }
    });
    client.on('error', (err) => log.warn({ err }, 'mqtt broker connection error'));
    client.on('offline', () => log.warn('mqtt broker unreachable: reconnecting'));
  }

  /** Connects in the background: until the broker answers, publishes and subscriptions wait in the client. */
  static async create(url: string, authority: DeviceAuthority, log: FastifyBaseLogger): Promise<ExternalBus> {
    const { key, cert, ca } = await authority.serviceTls();
    const client = mqtt.connect(url, {
      key,
      cert,
      // The broker's certificate may come from the device CA or from a public one.
      ca: [ca, ...rootCertificates],
      clientId: `${SERVICE_CLIENT_PREFIX}${randomBytes(8).toString('hex')}`,
      protocolVersion: 4,
      clean: true,
      reconnectPeriod: 1000,
      connectTimeout: 10_000,
    });
    // No Nagle delay on the broker connection: operations and results are small packets that wait on each other.
    client.on('connect', () => (client.stream as { setNoDelay?: (noDelay: boolean) => void }).setNoDelay?.(true));
    return ExternalBus.over(client, log);
  }

  /** The bus over a client already made (create's, or a test's against a broker of its own). */
  static over(client: MqttClient, log: FastifyBaseLogger): ExternalBus {
    return new ExternalBus(client, log);
  }

  publish(topic: string, payload: string | Buffer, options: { retain?: boolean } = {}): Promise<void> {
    return new Promise((resolve, reject) => {
      this.client.publish(topic, payload, { qos: 1, retain: options.retain ?? false }, (err) => (err ? reject(err) : resolve()));
    });
  }

  async subscribe(pattern: string, handler: (topic: string, payload: Buffer) => void): Promise<void> {
    this.handlers.push({ filter: pattern, handler });
    const granted = this.request(pattern, RESUBSCRIBE_FIRST_MS);
    // Offline, the client sends the subscription once connected: the service starts without waiting on it.
    if (this.client.connected) await granted;
    else granted.catch(() => undefined);
  }

  /**
   * Asks the broker for a subscription. One it refuses is asked for again, later and later, until it is
   * granted: the client itself never asks again for a refused one, and a clustered broker refuses while it
   * lacks its quorum (a node starting, a partition), which would leave this instance deaf to every device.
   */
  private request(pattern: string, retryMs: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.client.subscribe(pattern, { qos: 1 }, (err) => {
        if (!err) return resolve();
        reject(err);
        if (this.closed) return;
        this.log.error({ err, pattern, retryMs }, 'mqtt subscription refused by the broker: asked again');
        const timer = setTimeout(() => void this.request(pattern, Math.min(retryMs * 2, RESUBSCRIBE_MAX_MS)).catch(() => undefined), retryMs);
        timer.unref();
      });
    });
  }

  /** An external broker refuses an unbound device by the CRL (and its own session limits), not by this call. */
  disconnect(deviceId: string): void {
    this.log.debug({ deviceId }, 'device cut off: the external broker refuses its certificate by the CRL');
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.client.endAsync(true);
  }
}
