import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { DEVICE_TOPIC_ROOT } from '@latchkey/contract';
import type { Database } from '../../db/client.js';

/** The channel the instances' embedded brokers talk on. */
const MQTT_BRIDGE_CHANNEL = 'latchkey_mqtt';
/** NOTIFY refuses payloads of 8000 bytes or more: a message whose notice would be longer goes through the table. */
const MAX_NOTICE_BYTES = 7900;
/** Rows of the table are read by the peers within milliseconds; they are removed after this long. */
const KEEP_ROWS_S = 60;
const PRUNE_EVERY_MS = 30_000;
/** Notices sent in one statement at most (one transaction: delivered together, in order). */
const MAX_BATCH = 100;
/**
 * A stored message is read by the peers within a minute and never after a crash, so the transaction that
 * stores and announces it does not wait for its WAL flush (synchronous_commit off for that transaction alone).
 * PostgreSQL commits the transactions that notify one at a time, so a flush waited for here would hold every
 * other notifying commit (the log's, the other instances') behind it. Notices alone write nothing to the WAL,
 * so their commits never wait for a flush.
 */
const NO_FLUSH_WAIT = `set_config('synchronous_commit', 'off', true)`;

/** One message of a broker: its topic, payload and retained flag, as the broker took it. */
export interface BridgedMessage {
  topic: string;
  payload: Buffer;
  retain: boolean;
}

/** What the bridge asks of the broker of its own instance (EmbeddedBus). */
export interface BridgedBroker {
  /** Publishes a peer's message into this broker only: it is not forwarded again. */
  inject(message: BridgedMessage): Promise<void>;
  /** Ends this broker's connections of a device; `will: false` drops them without their Last Will. */
  cutLocal(deviceId: string, options: { will: boolean }): void;
  /** The retained messages under the prefixes of the devices connected to this broker now. */
  retainedOfConnected(): AsyncIterable<BridgedMessage>;
}

/**
 * What one instance says to the others (`o`: its origin id, `s`: its counter, which also keeps two equal
 * notices of one statement from being merged by PostgreSQL; `to`: for one instance only), by kind `k`:
 * m: a message (`t` topic, `r` retained, `p` payload in base64); ref: a message stored in
 * mqtt_bridge_messages under `id`; cut: end device `d`'s connection, Last Will included (unbinding); held:
 * device `d` was admitted here, so another instance's connection of it is stale (dropped without its Last
 * Will, as one broker does when a client connects again); sync: an instance (re)joined and asks for the
 * retained messages of the devices the others hold.
 */
interface Notice {
  o: string;
  s: number;
  to?: string;
  k: 'm' | 'ref' | 'cut' | 'held' | 'sync';
  t?: string;
  r?: 0 | 1;
  p?: string;
  id?: number;
  d?: string;
}
type Body = Omit<Notice, 'o' | 's'>;

interface Outgoing {
  body: Body;
  /** A message too large for a notice: stored in the table, its id notified. */
  row?: BridgedMessage;
  settle: (err?: unknown) => void;
}

/**
 * The embedded brokers of several instances on one PostgreSQL database, joined into one: every message a
 * broker takes under `latchkey/d/` — from a device (presence, state, results, renewals, Last Wills) or from
 * the service (configs, operations, certificates, retained clears) — is sent to the other instances with
 * NOTIFY on `latchkey_mqtt`, and each publishes it into its own broker, retained flag kept, without
 * forwarding it again. So the service's subscribers on every instance hear every device, an operation
 * published on one instance reaches a device connected to another, and a device gets its retained config
 * whichever instance it connects to. Messages too large for a notice go through mqtt_bridge_messages
 * (inserted, their id notified, read by the peers, removed after a minute).
 *
 * An instance's notices are sent one statement after another, consecutive ones in one statement, so the
 * peers receive them in the order its broker took them, and handle them in that order. The feed is not
 * replayed: whenever this instance's LISTEN (re)starts it asks the others for the retained messages of
 * the devices they hold, and an instance that missed a cut still refuses the certificate at the next
 * connect (the database decides every connect).
 */
export class BrokerBridge {
  /** This instance, among the peers. */
  readonly origin = randomBytes(8).toString('hex');
  private counter = 0;
  private readonly outgoing: Outgoing[] = [];
  private sending = false;
  /** Notices from the peers, handled one after another. */
  private inbox: Promise<void> = Promise.resolve();
  private stopListening: (() => Promise<void>) | null = null;
  private pruner: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly database: Pick<Database, 'listen' | 'executeSql'>,
    private readonly broker: BridgedBroker,
    private readonly log: FastifyBaseLogger,
  ) {}

  async start(): Promise<void> {
    const stop = await this.database.listen(MQTT_BRIDGE_CHANNEL, {
      message: (payload) => this.receive(payload),
      up: () => void this.send({ k: 'sync' }).catch((err: unknown) => this.log.warn({ err }, 'mqtt bridge: sync request not sent')),
      down: () => this.log.warn('mqtt bridge: the feed from the other instances was lost; reconnecting'),
    });
    if (this.stopped) return void (await stop());
    this.stopListening = stop;
    this.pruner = setInterval(() => void this.prune(), PRUNE_EVERY_MS);
    this.pruner.unref();
  }

  /** Sends what this instance's broker took to the others; resolves once it is committed. */
  forward(message: BridgedMessage, to?: string): Promise<void> {
    const p = message.payload.toString('base64');
    const body: Body = { k: 'm', t: message.topic, r: message.retain ? 1 : 0, p, ...(to ? { to } : {}) };
    // The notice as sent, with room for the origin and counter.
    if (Buffer.byteLength(JSON.stringify(body)) + 64 <= MAX_NOTICE_BYTES) return this.send(body);
    return this.send({ k: 'ref', ...(to ? { to } : {}) }, message);
  }

  /** Ends a device's connections on the other instances, Last Will included. */
  cut(deviceId: string): Promise<void> {
    return this.send({ k: 'cut', d: deviceId });
  }

  /** This instance admitted a device: the others drop any connection of it they still hold. */
  held(deviceId: string): Promise<void> {
    return this.send({ k: 'held', d: deviceId });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.pruner);
    for (const item of this.outgoing.splice(0)) item.settle();
    await this.stopListening?.();
    this.stopListening = null;
  }

  private send(body: Body, row?: BridgedMessage): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.outgoing.push({ body, row, settle: (err) => (err ? reject(err) : resolve()) });
      if (!this.sending) void this.drain();
    });
  }

  /** One statement at a time: the notices waiting, or one stored message. */
  private async drain(): Promise<void> {
    this.sending = true;
    try {
      while (this.outgoing.length > 0) {
        const first = this.outgoing[0]!;
        let batch: Outgoing[];
        let text: string;
        let values: unknown[];
        if (first.row) {
          batch = this.outgoing.splice(0, 1);
          text = `with m as (insert into mqtt_bridge_messages (topic, retain, payload) values ($2, $3, $4) returning id)
            select ${NO_FLUSH_WAIT}, pg_notify($1, ($5::jsonb || jsonb_build_object('id', m.id))::text) from m`;
          const { topic, retain, payload } = first.row;
          values = [MQTT_BRIDGE_CHANNEL, topic, retain, payload.toString('base64'), JSON.stringify(this.notice(first.body))];
        } else {
          const end = this.outgoing.findIndex((item, i) => item.row !== undefined || i >= MAX_BATCH);
          batch = this.outgoing.splice(0, end === -1 ? this.outgoing.length : end);
          values = [MQTT_BRIDGE_CHANNEL, ...batch.map((item) => JSON.stringify(this.notice(item.body)))];
          text = `select ${batch.map((_, i) => `pg_notify($1, $${i + 2})`).join(', ')}`;
        }
        try {
          await this.database.executeSql(text, values);
          for (const item of batch) item.settle();
        } catch (err) {
          for (const item of batch) item.settle(err);
        }
      }
    } finally {
      this.sending = false;
    }
  }

  private notice(body: Body): Notice {
    return { o: this.origin, s: ++this.counter, ...body };
  }

  private receive(text: string): void {
    let notice: Notice;
    try {
      notice = JSON.parse(text) as Notice;
    } catch {
      return void this.log.warn('mqtt bridge: a notice that is not JSON: dropped');
    }
    if (notice.o === this.origin || (notice.to !== undefined && notice.to !== this.origin)) return;
    this.inbox = this.inbox.then(() => this.handle(notice)).catch((err: unknown) => this.log.warn({ err, kind: notice.k }, 'mqtt bridge: notice not handled'));
  }

  private async handle(notice: Notice): Promise<void> {
    if (this.stopped) return;
    switch (notice.k) {
      case 'm':
        return this.inject(notice.t, notice.p, notice.r === 1);
      case 'ref': {
        const { rows } = await this.database.executeSql('select topic, retain, payload from mqtt_bridge_messages where id = $1', [notice.id]);
        const row = rows[0] as { topic: string; retain: boolean; payload: string } | undefined;
        if (!row) return void this.log.warn({ id: notice.id }, 'mqtt bridge: a stored message is gone: dropped');
        return this.inject(row.topic, row.payload, row.retain);
      }
      case 'cut':
      case 'held':
        if (typeof notice.d === 'string') this.broker.cutLocal(notice.d, { will: notice.k === 'cut' });
        return;
      case 'sync': {
        // Sent in the background: the inbox goes on while the answer is in the outgoing queue.
        const answers: Promise<void>[] = [];
        for await (const message of this.broker.retainedOfConnected()) answers.push(this.forward(message, notice.o));
        void Promise.all(answers).catch((err: unknown) => this.log.warn({ err }, 'mqtt bridge: sync answer not sent'));
        return;
      }
      default:
        return void this.log.warn('mqtt bridge: a notice of an unknown kind: dropped');
    }
  }

  /** Only device topics are carried; anything else in a notice is dropped. */
  private inject(topic: unknown, payload: unknown, retain: boolean): Promise<void> {
    if (typeof topic !== 'string' || !topic.startsWith(`${DEVICE_TOPIC_ROOT}/`) || typeof payload !== 'string') {
      this.log.warn({ topic }, 'mqtt bridge: a message outside the device topics: dropped');
      return Promise.resolve();
    }
    return this.broker.inject({ topic, payload: Buffer.from(payload, 'base64'), retain });
  }

  private async prune(): Promise<void> {
    try {
      await this.database.executeSql(`delete from mqtt_bridge_messages where created_at < now() - make_interval(secs => ${KEEP_ROWS_S})`);
    } catch (err) {
      this.log.debug({ err }, 'mqtt bridge: old stored messages not removed');
    }
  }
}
