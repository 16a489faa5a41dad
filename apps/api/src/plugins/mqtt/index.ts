import type { FastifyInstance } from 'fastify';
import type { DeviceAuthority } from './authority.js';
import { BrokerBridge } from './bridge.js';
import type { DeviceBus } from './bus.js';
import { EmbeddedBus } from './embedded.js';
import { ExternalBus } from './external.js';

/** The embedded broker's MQTT-over-WebSocket path on the service's own port. */
export const MQTT_WEBSOCKET_PATH = '/mqtt';

export interface MqttListener {
  /**
   * Opens the embedded broker's mutual-TLS port (MQTT_PORT; 0: any free port) and resolves with the bound
   * port; null with an external broker. server.ts calls it after the HTTP port is open; tests that need the
   * broker call it themselves, so building an app opens no port.
   */
  listen(): Promise<number | null>;
  /** The bound TLS port, or null before listen() and with an external broker. */
  readonly port: number | null;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** How modules reach devices: publish, subscribe and cut off (plugins/mqtt/bus.ts). */
    deviceBus: DeviceBus;
    mqtt: MqttListener;
  }
}

/**
 * The device broker: the embedded Aedes broker, or a client of MQTT_URL, decorated as `app.deviceBus`, and
 * closed with the app. The embedded broker also takes MQTT over WebSocket on the HTTP server's upgrades.
 * On PostgreSQL, where several instances may share the database, the embedded brokers of all of them are
 * joined through it (bridge.ts); PGlite serves one instance, whose broker stands alone.
 */
export async function registerMqtt(app: FastifyInstance, authority: DeviceAuthority): Promise<void> {
  const { config } = app;
  const log = app.log.child({ module: 'mqtt' });
  const bus: EmbeddedBus | ExternalBus = config.mqtt.url ? await ExternalBus.create(config.mqtt.url, authority, log) : await EmbeddedBus.create(authority, log);
  app.decorate<DeviceBus>('deviceBus', bus);
  let bridge: BrokerBridge | null = null;
  if (bus instanceof EmbeddedBus && app.database.kind === 'postgres') {
    bridge = new BrokerBridge(app.database, bus, log);
    bus.bridge(bridge);
    await bridge.start();
  }
  if (bus instanceof EmbeddedBus) {
    const hosts = [new URL(config.publicUrl).hostname, new URL(config.mqtt.publicUrl).hostname, 'localhost', '127.0.0.1', '::1'].map(stripBrackets);
    app.decorate('mqtt', {
      listen: () => bus.listen(config.mqtt.port, config.host, hosts),
      get port() {
        return bus.port;
      },
    });
    app.server.on('upgrade', (request, socket, head) => {
      if (new URL(request.url ?? '/', 'http://localhost').pathname === MQTT_WEBSOCKET_PATH) bus.handleUpgrade(request, socket, head);
      // Without another upgrade handler nobody answers this one: end it, as Node does with no handler at all.
      else if (app.server.listenerCount('upgrade') === 1) socket.destroy();
    });
  } else {
    app.decorate('mqtt', { listen: async () => null, port: null });
  }
  app.addHook('onClose', async () => {
    // The bridge first: onClose hooks run last-registered first, so the database may be closed already. The
    // devices this broker drops reconnect to another instance, which reports them online again.
    await bridge?.stop();
    await bus.close();
  });
}

/** An IPv6 literal's hostname in a URL is bracketed; a certificate names the address without them. */
const stripBrackets = (host: string) => host.replace(/^\[(.*)\]$/, '$1');
