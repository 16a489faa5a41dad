import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { and, eq, isNotNull } from 'drizzle-orm';
import { lockDevices } from '../../db/schema.js';
import type { Db } from '../../db/client.js';
import { normaliseSerial } from '../../plugins/mqtt/authority.js';
import { isCurrentCertificate } from '../devices/device-binding.service.js';

/**
 * The questions RabbitMQ's HTTP auth backend (rabbitmq_auth_backend_http) and EMQX's HTTP authenticator ask
 * about an MQTT client that presented a device-CA certificate. The user name is the certificate's subject
 * (`ssl_cert_login_from = distinguished_name`, `peer_cert_as_username = dn`): its CN, and for certificates
 * issued since migration 0024 its serial, so a device logs in only with the certificate it holds now. The
 * broker asks, per connection, whether that name may log in, use the virtual host, the exchange and its own
 * subscription queues, and each topic (an MQTT topic's `/` is the routing key's `.`). Only the broker may
 * ask: every request carries HTTP Basic credentials with BROKER_AUTH_SECRET, and without that variable the
 * routes do not exist.
 */

/** The CN of the service's instances; their client ids start with it. */
export const SERVICE_NAME = 'latchkey-service';
/** What a device writes (presence, state, result, renew, event) and reads (config, op, certificate), as routing-key words. */
const DEVICE_WRITES = new Set(['presence', 'state', 'result', 'renew', 'event']);
const DEVICE_READS = new Set(['config', 'op', 'certificate']);
const DEVICE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** A certificate serial as a subject names it: hex, at most 20 bytes (RFC 5280). */
const SERIAL = /^[0-9a-f]{1,40}$/i;

type Query = Record<string, string | undefined>;

/** Who a broker's user name says a client is: its certificate's CN, and the serial when the subject names it. */
export interface BrokerName {
  cn: string;
  serial: string | null;
}

/**
 * Reads the user name a broker sends: the subject as RabbitMQ and EMQX write it (RFC 4514, last RDN first:
 * `SERIALNUMBER=<hex>,CN=<deviceId>`, or `CN=<name>` for a certificate without the serial), or a bare CN
 * (a broker still configured to send the CN alone). Null for anything else — another attribute, a
 * multi-valued RDN, an attribute twice — which no certificate of the device CA carries.
 */
export function parseBrokerName(username: string): BrokerName | null {
  if (!username.includes('=')) return username ? { cn: username, serial: null } : null;
  let cn: string | null = null;
  let serial: string | null = null;
  for (const part of username.split(',')) {
    const match = /^(CN|SERIALNUMBER|2\.5\.4\.5)=(.+)$/i.exec(part);
    if (!match) return null;
    const [, type, value] = match as unknown as [string, string, string];
    if (type.toUpperCase() === 'CN') {
      if (cn !== null) return null;
      cn = value;
    } else {
      if (serial !== null || !SERIAL.test(value)) return null;
      serial = normaliseSerial(value);
    }
  }
  return cn === null ? null : { cn, serial };
}

/** The CN a broker's user name carries; '' (no one) when it cannot be read. */
const nameOf = (username: string): string => parseBrokerName(username)?.cn ?? '';

/**
 * True when a certificate that names no serial may log in as `deviceId`: only while the certificate the
 * device holds now names none either (issued before migration 0024: `certificate_subject_serial` false).
 * The broker cannot tell such certificates apart: one the device renewed from before 0024 passes with its
 * current one until the device's next renewal, which issues a certificate naming its serial.
 */
async function holdsCertificateWithoutSerial(db: Db, deviceId: string): Promise<boolean> {
  if (!DEVICE_ID.test(deviceId)) return false;
  const rows = await db
    .select({ id: lockDevices.id })
    .from(lockDevices)
    .where(and(eq(lockDevices.id, deviceId), isNotNull(lockDevices.certificateSerial), eq(lockDevices.certificateSubjectSerial, false)))
    .limit(1);
  return rows.length > 0;
}

/**
 * Whether the certificate `username` names may log in: the service's (CN=latchkey-service), or a bound
 * device's current certificate — the one its row holds, or the one it renewed from while that one's grace
 * lasts, as the embedded broker decides (`isCurrentCertificate`). A certificate the device renewed from,
 * once the grace is over, and any certificate of a device unbound or replaced are refused.
 */
export async function mayLogIn(db: Db, username: string): Promise<boolean> {
  const name = parseBrokerName(username);
  if (!name) return false;
  if (name.cn === SERVICE_NAME) return name.serial === null;
  return name.serial === null ? holdsCertificateWithoutSerial(db, name.cn) : isCurrentCertificate(db, name.cn, name.serial);
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
  // Every question names the client by its certificate's subject; all but the login decide by its CN.
  route('user', async (q) => (q.client_id === undefined || mayUseVhost(nameOf(q.username!), q.client_id)) && mayLogIn(app.db, q.username!));
  route('vhost', (q) => q.vhost === vhost && mayUseVhost(nameOf(q.username!), q.client_id));
  route('resource', (q) => q.vhost === vhost && mayUseResource(nameOf(q.username!), q.resource ?? '', q.name ?? '', q.permission ?? ''));
  route('topic', (q) => q.vhost === vhost && q.resource === 'topic' && mayUseTopic(nameOf(q.username!), q.name ?? '', q.routing_key ?? '', q.permission ?? ''));
}
