import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { and, eq, isNotNull } from 'drizzle-orm';
import { lockDevices } from '../../db/schema.js';
import type { Db } from '../../db/client.js';

/**
 * The questions RabbitMQ's HTTP auth backend (rabbitmq_auth_backend_http) asks about an MQTT client that
 * presented a device-CA certificate: the certificate's CN is the username (`ssl_cert_login_from =
 * common_name`), and the broker asks, per connection, whether that name may log in, use the virtual host,
 * the exchange and its own subscription queues, and each topic (an MQTT topic's `/` is the routing key's
 * `.`). Only the broker may ask: every request carries HTTP Basic credentials with BROKER_AUTH_SECRET, and
 * without that variable the routes do not exist.
 */

/** The CN of the service's instances; their client ids start with it. */
export const SERVICE_NAME = 'latchkey-service';
/** What a device writes (presence, state, result, renew, event) and reads (config, op, certificate), as routing-key words. */
const DEVICE_WRITES = new Set(['presence', 'state', 'result', 'renew', 'event']);
const DEVICE_READS = new Set(['config', 'op', 'certificate']);
const DEVICE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;


type Query = Record<string, string | undefined>;

/** True when `deviceId` names a provisioned device that is bound to a lock now (unbinding deletes its row). */
export async function isBoundDevice(db: Db, deviceId: string): Promise<boolean> {
  if (!DEVICE_ID.test(deviceId)) return false;
  const rows = await db
    .select({ id: lockDevices.id })
    .from(lockDevices)
    .where(and(eq(lockDevices.id, deviceId), isNotNull(lockDevices.certificateSerial)))
    .limit(1);
  return rows.length > 0;
}

/** Whether `name` may log in: the service, or a device bound to a lock now. */
export async function mayLogIn(db: Db, name: string): Promise<boolean> {
  return name === SERVICE_NAME || isBoundDevice(db, name);
}

/**
 * Whether `name` may open the virtual host with `clientId` (the first question that names the client id):
 * a device only as itself, or one certificate could take another device's session over; the service's
 * instances, which share one name, under its prefix.
 */
export function mayUseVhost(name: string, clientId: string | undefined): boolean {
  if (clientId === undefined) return false;
  return name === SERVICE_NAME ? clientId.startsWith(`${SERVICE_NAME}-`) : clientId === name;
}

/** Whether `name` may use the exchange or queue `resource` for `permission` (configure, write, read). */
export function mayUseResource(name: string, resource: string, object: string, permission: string): boolean {
  if (resource === 'exchange') return object === 'amq.topic' && (permission === 'read' || permission === 'write');
  if (resource !== 'queue') return false;
  // The MQTT plugin's subscription queues are named after the client id: mqtt-subscription-<client id>qos0|1.
  const match = /^mqtt-subscription-(.+)qos[01]$/.exec(object);
  if (!match) return false;
  return name === SERVICE_NAME ? match[1]!.startsWith(`${SERVICE_NAME}-`) : match[1] === name;
}

/** Whether `name` may publish (write) to or subscribe (read) to `routingKey` on amq.topic. */
export function mayUseTopic(name: string, object: string, routingKey: string, permission: string): boolean {
  if (object !== 'amq.topic') return false;
  const words = routingKey.split('.');
  if (words[0] !== 'latchkey' || words[1] !== 'd') return false;
  if (name === SERVICE_NAME) return permission === 'read' || permission === 'write';
  if (words.length !== 4 || words[2] !== name) return false;
  return permission === 'write' ? DEVICE_WRITES.has(words[3]!) : permission === 'read' && DEVICE_READS.has(words[3]!);
}

function fromBroker(request: FastifyRequest, secret: string): boolean {
  const header = request.headers.authorization ?? '';
  if (!header.startsWith('Basic ')) return false;
  const decoded = Buffer.from(header.slice(6), 'base64').toString();
  const given = Buffer.from(decoded.slice(decoded.indexOf(':') + 1));
  const wanted = Buffer.from(secret);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

/** The one virtual host devices and the service use. */
const VHOST = '/';

export async function brokerAuthRoutes(app: FastifyInstance) {
  // The password the broker sends (HTTP Basic, any user name).
  const secret = app.config.mqtt.brokerAuthSecret;
  if (!secret) return;
  const vhost = VHOST;
  // RabbitMQ reads a word; EMQX's HTTP authenticator, which asks with Accept: application/json, reads {result}.
  const answer = (request: FastifyRequest, reply: FastifyReply, allowed: boolean) =>
    /application\/json/.test(request.headers.accept ?? '')
      ? reply.type('application/json').send({ result: allowed ? 'allow' : 'deny' })
      : reply.type('text/plain').send(allowed ? 'allow' : 'deny');
  const route = (path: string, decide: (query: Query) => boolean | Promise<boolean>) =>
    app.get(`/broker-auth/${path}`, { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
      if (!fromBroker(request, secret)) return reply.code(401).type('text/plain').send('deny');
      const query = request.query as Query;
      const allowed = typeof query.username === 'string' && (await decide(query));
      return answer(request, reply, allowed);
    });
  // RabbitMQ names the client id at the vhost question; EMQX names it here, the only one it asks.
  route('user', async (q) => (q.client_id === undefined || mayUseVhost(q.username!, q.client_id)) && mayLogIn(app.db, q.username!));
  route('vhost', (q) => q.vhost === vhost && mayUseVhost(q.username!, q.client_id));
  route('resource', (q) => q.vhost === vhost && mayUseResource(q.username!, q.resource ?? '', q.name ?? '', q.permission ?? ''));
  route('topic', (q) => q.vhost === vhost && q.resource === 'topic' && mayUseTopic(q.username!, q.name ?? '', q.routing_key ?? '', q.permission ?? ''));
}
