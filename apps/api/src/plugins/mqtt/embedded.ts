import type { IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import { Aedes, type AedesPublishPacket, type Client, type Connection } from 'aedes';
import { WebSocketServer, createWebSocketStream } from 'ws';
import type { FastifyBaseLogger } from 'fastify';
import { DEVICE_TOPIC_ROOT, deviceTopic, MAX_DEVICE_CONNECTIONS, MAX_DEVICE_SUBSCRIPTIONS } from '@latchkey/contract';
import { mayPublish, mayReceive, maySubscribe, MAX_DEVICE_PACKET_BYTES } from './acl.js';
import { normaliseSerial, type DeviceAuthority } from './authority.js';
import { allowedDirectAccessEndpoints } from './direct-access.js';
import type { BridgedBroker, BridgedMessage, BrokerBridge } from './bridge.js';
import type { DeviceBus } from './bus.js';
import { FrameGuard } from './frame-guard.js';
import { indexRetained } from './retained-index.js';

/** Who is on the other end of a connection: the CN and serial of the device certificate it presented, and its address. */
interface Identity {
  deviceId: string;
  serial: string;
  address: string | null;
}

/** What the broker checks of a device's publish; the payload may be replaced before anyone receives it. */
interface DevicePublish {
  topic: string;
  payload: Buffer | string;
}

/** MQTT 3.1.1 CONNACK return codes: 5, not authorized (the broker decided); 3, server unavailable (it could not). */
const NOT_AUTHORIZED = 5;
const SERVER_UNAVAILABLE = 3;
const refusal = (message: string, returnCode = NOT_AUTHORIZED) => Object.assign(new Error(message), { returnCode });
/** The device could not be looked up (the database did not answer): not a verdict on the device, which tries again. */
class LookupFailed extends Error {}
/** The device is at its connection cap: it may connect again once one of its connections ends. */
class TooManyConnections extends Error {}

/** A TLS handshake that has not finished by then is dropped. */
const HANDSHAKE_TIMEOUT_MS = 10_000;
/**
 * Connections in their TLS handshake or awaiting their admission at most; one more is closed as it
 * arrives, before any work is spent on it, and the device tries again after its backoff. In a reconnect
 * storm, a queue deeper than what the host can admit within a device's connect timeout makes the broker
 * finish handshakes for devices that have given up already, and none get through.
 */
export const MAX_PENDING_CONNECTS = 64;

/**
 * The broker inside the service (Aedes). Devices connect with mutual TLS on the port `listen` opens, or
 * over WebSocket at /mqtt when the TLS beneath it carries their certificate; the service itself publishes
 * and subscribes in-process. A device is admitted when its certificate chains to the device CA (checked by
 * TLS) and is the one its lock_devices row holds now (checked here, in the database, on every connect), and
 * it may use only its own topics (acl.ts).
 */
export class EmbeddedBus implements DeviceBus, BridgedBroker {
  readonly kind = 'embedded';
  private readonly identities = new WeakMap<Connection, Identity>();
  /** The connections of each device admitted so far. */
  private readonly clients = new Map<string, Set<Client>>();
  /** Admitted connections by MQTT client id: a device cannot take over another device's client id. */
  private readonly byClientId = new Map<string, Client>();
  /** The filters granted to each connection, so a device's subscriptions are counted against its cap. */
  private readonly filters = new WeakMap<Client, Set<string>>();
  /** Raised by every disconnect(): a connect whose database check began before it is refused. */
  private readonly cuts = new Map<string, number>();
  private tlsServer: tls.Server | null = null;
  private readonly sockets = new Set<Socket>();
  /** Connections in their TLS handshake, by the peer's address and port (MAX_PENDING_CONNECTS). */
  private readonly handshaking = new Map<string, Socket>();
  /** Connects whose admission is being decided (the database lookup). */
  private authenticating = 0;
  private readonly webSockets = new WebSocketServer({ noServer: true, maxPayload: MAX_DEVICE_PACKET_BYTES });
  private closed = false;
  /**
   * The other instances' brokers (bridge.ts), with several instances on one PostgreSQL database. What
   * this broker takes from a device (a publish with a client) or from the service (publish()) is sent to
   * them; what they send is published here without a client (inject()), so it never goes back.
   */
  private peers: BrokerBridge | null = null;
  /**
   * Told when this broker begins to hold a device (its first connection admitted) and when it holds it no
   * more (its last connection ended or cut), with the time: modules/devices/runtime/instance-heartbeat.ts.
   */
  onHolding: ((deviceId: string, held: boolean, at: number) => void) | null = null;
  /**
   * Whether a device's message was for this instance alone, so the other instances are not sent it (an
   * answer to an operation this instance sent and took: modules/devices/runtime/relay.ts).
   */
  takenHere: ((topic: string, payload: string | Buffer) => boolean) | null = null;

  private broker!: Aedes;

  private constructor(
    private readonly authority: DeviceAuthority,
    private readonly log: FastifyBaseLogger,
  ) {}

  static async create(authority: DeviceAuthority, log: FastifyBaseLogger): Promise<EmbeddedBus> {
    const bus = new EmbeddedBus(authority, log);
    const broker = await Aedes.createBroker({
      authenticate: (client, _username, _password, done) =>
        void bus.authenticate(client).then(
          (ok) => done(ok ? null : refusal('not authorized'), ok),
          (err: unknown) => done(err instanceof LookupFailed || err instanceof TooManyConnections ? refusal('server unavailable', SERVER_UNAVAILABLE) : refusal('not authorized'), false),
        ),
      authorizePublish: (client, packet, done) => done(bus.authorizePublish(client, packet) ? null : new Error('publish refused')),
      authorizeSubscribe: (client, subscription, done) => done(null, bus.authorizeSubscribe(client, subscription.topic) ? subscription : null),
      authorizeForward: (client, packet) => (bus.authorizeForward(client, packet) ? packet : null),
    });
    bus.broker = broker;
    indexRetained((broker as unknown as { persistence: Parameters<typeof indexRetained>[0] }).persistence);
    broker.on('clientDisconnect', (client) => bus.forget(client));
    broker.on('unsubscribe', (filters, client) => {
      for (const filter of filters) bus.filters.get(client)?.delete(filter);
    });
    broker.on('clientError', (client, err) => log.debug({ err, clientId: client.id }, 'mqtt client error'));
    // A device's message (its Last Will included) once the broker has taken it.
    broker.on('publish', (packet, client) => {
      if (!client || !packet.topic.startsWith(`${DEVICE_TOPIC_ROOT}/`)) return;
      if (bus.takenHere?.(packet.topic, packet.payload) || !bus.peers) return;
      bus.peers.forward(messageOf(packet)).catch((err: unknown) => log.warn({ err, topic: packet.topic }, 'mqtt bridge: a device message not sent to the other instances'));
    });
    return bus;
  }

  /** Joins this broker to the other instances' (several instances on one PostgreSQL database). */
  bridge(peers: BrokerBridge): void {
    this.peers = peers;
  }

  /** Resolves once this broker has taken the message and, when bridged, the other instances have been sent it. */
  async publish(topic: string, payload: string | Buffer, options: { retain?: boolean } = {}): Promise<void> {
    const message = { topic, payload: Buffer.isBuffer(payload) ? payload : Buffer.from(payload), retain: options.retain ?? false };
    await Promise.all([this.publishHere(message), this.peers?.forward(message)]);
  }

  /** Another instance's message: published to this broker's subscribers and devices, and not forwarded again. */
  inject(message: BridgedMessage): Promise<void> {
    return this.publishHere(message);
  }

  /** The retained messages under the prefixes of the devices connected here now (a rejoining instance asks). */
  async *retainedOfConnected(): AsyncIterable<BridgedMessage> {
    const connected = new Set(this.clients.keys());
    if (connected.size === 0) return;
    const root = `${DEVICE_TOPIC_ROOT}/`;
    for await (const packet of this.retainedStream(`${root}#`)) {
      const deviceId = packet.topic.slice(root.length).split('/')[0]!;
      if (connected.has(deviceId)) yield messageOf(packet);
    }
  }

  private publishHere({ topic, payload, retain }: BridgedMessage): Promise<void> {
    const packet = { cmd: 'publish' as const, topic, payload, qos: 1 as const, dup: false, retain };
    return new Promise((resolve, reject) => this.broker.publish(packet, (err) => (err ? reject(err) : resolve())));
  }

  private retainedStream(pattern: string): AsyncIterable<AedesPublishPacket> {
    const persistence = (this.broker as unknown as { persistence: { createRetainedStream(pattern: string): AsyncIterable<AedesPublishPacket> } }).persistence;
    return persistence.createRetainedStream(pattern);
  }

  async subscribe(pattern: string, handler: (topic: string, payload: Buffer) => void): Promise<void> {
    const deliver = (packet: AedesPublishPacket, done: () => void) => {
      this.call(handler, packet);
      done();
    };
    await new Promise<void>((resolve) => this.broker.subscribe(pattern, deliver, resolve));
    // In-process subscriptions see only new messages: the retained ones are read from the store.
    for await (const packet of this.retainedStream(pattern)) this.call(handler, packet);
  }

  /** The devices this broker holds a connection of now. */
  heldDevices(): string[] {
    return [...this.clients.keys()];
  }

  /** Ends the device's connections here and, when bridged, on every other instance. */
  disconnect(deviceId: string): void {
    this.cutLocal(deviceId, { will: true });
    this.peers?.cut(deviceId).catch((err: unknown) => this.log.warn({ err, deviceId }, 'mqtt bridge: the cut-off not sent to the other instances'));
  }

  /**
   * Ends this broker's connections of a device, and refuses a connect of it whose database check is under
   * way. Without its Last Will when another instance admitted the device since: its `offline` would come
   * after the new connection's `online`.
   */
  cutLocal(deviceId: string, { will }: { will: boolean }): void {
    this.cuts.set(deviceId, (this.cuts.get(deviceId) ?? 0) + 1);
    for (const client of this.clients.get(deviceId) ?? []) {
      if (!will) (client as unknown as { will: unknown }).will = null;
      client.close();
    }
    if (this.clients.delete(deviceId)) this.onHolding?.(deviceId, false, Date.now());
  }

  /** Opens the mutual-TLS listener; resolves with the port it is bound to (0: any free port). */
  async listen(port: number, host: string | undefined, hosts: string[]): Promise<number> {
    if (this.tlsServer) return (this.tlsServer.address() as AddressInfo).port;
    const material = await this.authority.brokerTls(hosts);
    // noDelay: an operation and its result are small packets each waiting on the other; with Nagle's
    // algorithm against the peer's delayed ACK, every round trip waited about 40 ms for nothing.
    const server = tls.createServer({ ...material, requestCert: true, rejectUnauthorized: true, handshakeTimeout: HANDSHAKE_TIMEOUT_MS, noDelay: true }, (socket) =>
      this.accept(socket, identityOf(socket)),
    );
    server.on('tlsClientError', (err) => this.log.debug({ err }, 'mqtt tls handshake refused'));
    // The peer's address is read before TLS takes the socket over: afterwards this socket no longer knows it.
    const peers = new WeakMap<Socket, string>();
    server.prependListener('connection', (socket: Socket) => peers.set(socket, endpointOf(socket)));
    // Closing ends connections still in their handshake too, which the broker does not know of yet.
    server.on('connection', (socket: Socket) => {
      const key = peers.get(socket)!;
      if (this.handshaking.size + this.authenticating >= MAX_PENDING_CONNECTS) {
        socket.destroy();
        return;
      }
      this.handshaking.set(key, socket);
      socket.setNoDelay(true);
      this.sockets.add(socket);
      socket.once('close', () => {
        this.sockets.delete(socket);
        if (this.handshaking.get(key) === socket) this.handshaking.delete(key);
      });
    });
    server.on('secureConnection', (socket: tls.TLSSocket) => this.handshaking.delete(endpointOf(socket)));
    this.tlsServer = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return (server.address() as AddressInfo).port;
  }

  /** The bound TLS port, or null before `listen`. */
  get port(): number | null {
    return this.tlsServer ? (this.tlsServer.address() as AddressInfo).port : null;
  }

  /**
   * MQTT over WebSocket: the upgrade of an HTTP request to /mqtt. A device is admitted only with a device
   * certificate on the TLS connection beneath it, which exists only when this process terminates TLS.
   */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.webSockets.handleUpgrade(request, socket, head, (webSocket) => {
      const stream = createWebSocketStream(webSocket);
      stream.on('error', () => webSocket.terminate());
      this.accept(stream, request.socket instanceof tls.TLSSocket ? identityOf(request.socket) : null);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const server = this.tlsServer;
    await new Promise<void>((resolve) => this.broker.close(() => resolve()));
    for (const client of this.webSockets.clients) client.terminate();
    this.webSockets.close();
    if (server) {
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of this.sockets) socket.destroy();
      await done;
    }
  }

  private accept(conn: Duplex, identity: Identity | null): void {
    if (identity) this.identities.set(conn, identity);
    this.broker.handle(conn);
    // Aedes reads in paused mode, so this listener sees each chunk as the parser is given it.
    const guard = new FrameGuard(MAX_DEVICE_PACKET_BYTES);
    conn.on('data', (chunk: Buffer) => {
      if (guard.feed(chunk)) return;
      this.log.warn({ deviceId: identity?.deviceId }, 'mqtt packet over the size limit: connection closed');
      conn.destroy();
    });
  }

  private async authenticate(client: Client): Promise<boolean> {
    const identity = this.identities.get(client.conn);
    if (!identity) {
      this.log.info({ clientId: client.id }, 'mqtt connect refused: no device certificate');
      return false;
    }
    const { deviceId, serial } = identity;
    const cut = this.cuts.get(deviceId) ?? 0;
    let current: boolean;
    this.authenticating++;
    try {
      current = await this.authority.isCurrentCertificate(deviceId, serial);
    } catch (err) {
      this.log.error({ err, deviceId }, 'mqtt connect refused for now: the device could not be looked up');
      throw new LookupFailed('the device could not be looked up', { cause: err });
    } finally {
      this.authenticating--;
    }
    if (!current || cut !== (this.cuts.get(deviceId) ?? 0)) {
      this.log.info({ deviceId, serial }, 'mqtt connect refused: the certificate is not the one the device holds now');
      return false;
    }
    const holder = this.byClientId.get(client.id);
    if (holder && this.identities.get(holder.conn)?.deviceId !== deviceId) {
      this.log.info({ deviceId, clientId: client.id }, 'mqtt connect refused: the client id is held by another device');
      return false;
    }
    // A connection under the same client id is about to be replaced by this one: it does not count.
    const held = [...(this.clients.get(deviceId) ?? [])].filter((other) => other.id !== client.id).length;
    if (held >= MAX_DEVICE_CONNECTIONS) {
      this.log.warn({ deviceId, held }, 'mqtt connect refused: the device holds as many connections as it may');
      throw new TooManyConnections();
    }
    let set = this.clients.get(deviceId);
    if (!set) this.clients.set(deviceId, (set = new Set()));
    set.add(client);
    this.byClientId.set(client.id, client);
    this.onHolding?.(deviceId, true, Date.now());
    // A connection that ends before the broker registers it gets no clientDisconnect.
    client.conn.once('close', () => this.forget(client));
    this.peers?.held(deviceId).catch((err: unknown) => this.log.warn({ err, deviceId }, 'mqtt bridge: a connect not announced to the other instances'));
    return true;
  }

  private authorizePublish(client: Client | null, packet: DevicePublish): boolean {
    if (!client) return true;
    const { topic, payload } = packet;
    const identity = this.identities.get(client.conn);
    const deviceId = identity?.deviceId;
    const ok = deviceId !== undefined && mayPublish(deviceId, topic, Buffer.byteLength(payload));
    if (!ok) this.log.warn({ deviceId, topic, bytes: Buffer.byteLength(payload) }, 'mqtt publish refused');
    else if (topic === deviceTopic(deviceId, 'state')) this.limitDirectAccess(identity!, packet);
    return ok;
  }

  /**
   * A state's direct-access endpoints are kept only when on a private network or at the address the device
   * connects from (direct-access.ts); the others are taken out of the message before anyone receives it.
   * Only this broker knows the device's address: the service's subscribers, on every instance, hear the result.
   */
  private limitDirectAccess(identity: Identity, packet: DevicePublish): void {
    let state: unknown;
    try {
      state = JSON.parse(packet.payload.toString());
    } catch {
      return;
    }
    const endpoints = (state as { directAccessEndpoints?: unknown } | null)?.directAccessEndpoints;
    if (!Array.isArray(endpoints) || !endpoints.every((url) => typeof url === 'string')) return;
    const allowed = allowedDirectAccessEndpoints(endpoints, identity.address);
    if (allowed.length === endpoints.length) return;
    this.log.warn({ deviceId: identity.deviceId, refused: endpoints.filter((url) => !allowed.includes(url)) }, 'direct-access endpoints refused: neither on a private network nor the device’s own address');
    packet.payload = Buffer.from(JSON.stringify({ ...(state as object), directAccessEndpoints: allowed }));
  }

  private authorizeSubscribe(client: Client, filter: string): boolean {
    const deviceId = this.identities.get(client.conn)?.deviceId;
    const ok = deviceId !== undefined && maySubscribe(deviceId, filter);
    if (!ok) {
      this.log.warn({ deviceId, filter }, 'mqtt subscribe refused');
      return false;
    }
    const own = this.filtersOf(client);
    if (own.has(filter)) return true;
    let count = 0;
    for (const other of this.clients.get(deviceId) ?? [client]) count += this.filtersOf(other).size;
    if (count >= MAX_DEVICE_SUBSCRIPTIONS) {
      this.log.warn({ deviceId, filter, count }, 'mqtt subscribe refused: the device holds as many subscriptions as it may');
      return false;
    }
    own.add(filter);
    return true;
  }

  /** A connection's filters: those granted here (some perhaps not yet stored), and those its session restored. */
  private filtersOf(client: Client): Set<string> {
    let filters = this.filters.get(client);
    if (!filters) this.filters.set(client, (filters = new Set()));
    for (const filter of Object.keys((client as unknown as { subscriptions: Record<string, unknown> }).subscriptions ?? {})) filters.add(filter);
    return filters;
  }

  private authorizeForward(client: Client, packet: AedesPublishPacket): boolean {
    const deviceId = this.identities.get(client.conn)?.deviceId;
    return deviceId !== undefined && packet.topic.startsWith(`${DEVICE_TOPIC_ROOT}/`) && mayReceive(deviceId, packet.topic);
  }

  private forget(client: Client): void {
    if (this.byClientId.get(client.id) === client) this.byClientId.delete(client.id);
    const deviceId = this.identities.get(client.conn)?.deviceId;
    const set = deviceId ? this.clients.get(deviceId) : undefined;
    if (!set || !deviceId) return;
    set.delete(client);
    if (set.size === 0) {
      this.clients.delete(deviceId);
      this.onHolding?.(deviceId, false, Date.now());
    }
  }

  private call(handler: (topic: string, payload: Buffer) => void, packet: AedesPublishPacket): void {
    try {
      handler(packet.topic, Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload));
    } catch (err) {
      this.log.error({ err, topic: packet.topic }, 'device message handler failed');
    }
  }
}

const messageOf = (packet: AedesPublishPacket): BridgedMessage => ({
  topic: packet.topic,
  payload: Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload),
  retain: packet.retain,
});

/** A TCP connection's peer, the same on the socket and on the TLS socket over it. */
const endpointOf = (socket: Socket) => `${socket.remoteAddress}|${socket.remotePort}`;

/** The CN and serial of a verified client certificate; null without one. */
function identityOf(socket: tls.TLSSocket): Identity | null {
  if (!socket.authorized) return null;
  const certificate = socket.getPeerCertificate();
  const cn = certificate?.subject?.CN;
  if (typeof cn !== 'string' || !certificate.serialNumber) return null;
  return { deviceId: cn, serial: normaliseSerial(certificate.serialNumber), address: socket.remoteAddress ?? null };
}
