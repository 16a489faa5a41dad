import { createHmac } from 'node:crypto';
import { eq, inArray, sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import { PgBoss } from 'pg-boss';
import { WEBHOOK_SECRET_PREFIX } from '@latchkey/contract';
import type { Config } from '../../config.js';
import type { Database } from '../../db/client.js';
import { webhookDeliveries, webhooks } from '../../db/schema.js';
import type { Outbound } from '../../lib/outbound.js';
import { eventTimestampOf } from '../../lib/webhook-outbox.js';
import type { SecretBox } from '../../lib/secret-box.js';

export const DELIVERY_QUEUE = 'webhook-delivery';
/**
 * pg-boss's schema. pg-boss ≥ 11 cannot migrate the schema pg-boss 10 made (`pgboss`, version 24), so 12
 * installs its own beside it; migration 0011 hands what was queued there to this one (decision 0006).
 */
export const QUEUE_SCHEMA = 'pgboss_v12';
/** Workers per instance; each takes one delivery at a time. */
const WORKERS = 4;
/**
 * The most deliveries of one application in flight at once, across all instances (pg-boss's
 * groupConcurrency, a job's group being its application): one application's backlog or slow receiver
 * holds at most this many of the workers, and the others go on with every other application's.
 */
export const PER_APPLICATION_CONCURRENCY = 2;
/** The most of a receiver's answer that is read (its body is not kept, only its status). */
const MAX_ANSWER_BYTES = 64 * 1024;
const RELAY_BATCH = 100;
/** How long a relay's claim on an outbox row lasts: a relay that dies holding it is replaced after this. */
const RELAY_LEASE_SECONDS = 30;
/** Finished deliveries are kept in the log this long, then pruned (checked every PRUNE_EVERY_MS). */
export const DELIVERY_RETENTION_DAYS = 30;
const PRUNE_EVERY_MS = 10 * 60_000;

/**
 * Standard Webhooks signature: `v1,` + base64 HMAC-SHA256 of "{id}.{timestamp}.{body}", keyed by the
 * base64-decoded part of the secret after `whsec_`.
 */
export function signPayload(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

interface DeliveryJob {
  deliveryId: string;
}

type WorkerOptions = { batchSize: number; pollingIntervalSeconds: number; includeMetadata: true; groupConcurrency: number };

/** A claimed delivery, to be queued in its application's group. */
interface Claimed {
  id: string;
  applicationId: string;
}

/**
 * Instances starting at once on an empty database all create the queue, and PostgreSQL may end one of
 * them as a deadlock victim (40P01; seen in the scale-out test, which then lost that instance). Creating
 * the queue is safe to repeat (pg-boss inserts it ON CONFLICT DO NOTHING), so the victim tries again.
 */
async function retryOnDeadlock<T>(work: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= attempts || (error as { code?: unknown }).code !== '40P01') throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt + Math.random() * 50));
    }
  }
}

/**
 * Delivers webhooks, on pg-boss over the service's own database (PostgreSQL, or the embedded PGlite:
 * docs/decisions/0006-webhook-delivery-queue.md):
 * - the relay moves owed deliveries (outbox rows, written with their change) into the queue, claiming
 *   them with a lease first so a relay killed half-way leaves them to the next one;
 * - workers take jobs, sign and POST through the outbound guard, record the attempt; a failed attempt is
 *   thrown back to pg-boss, which retries it with exponential backoff (about a day in all), and a job
 *   whose worker was killed mid-delivery expires and is retried by any instance's queue maintenance.
 * At least once: a receiver may see a delivery again, always with the same `webhook-id`.
 */
export class WebhookDispatcher {
  private boss: PgBoss | null = null;
  /** The queue's start, once begun (startQueue). */
  private starting: Promise<PgBoss> | null = null;
  private relayTimer: NodeJS.Timeout | undefined;
  private relaying: Promise<void> | null = null;
  private stopped = false;
  private workerIds: string[] = [];
  private pruneTimer: NodeJS.Timeout | undefined;
  /** Told each attempt's outcome (metrics: app.ts wires it to app.metrics.webhookDeliveries). */
  onAttempt: ((outcome: 'succeeded' | 'retrying' | 'failed') => void) | undefined;

  constructor(
    private readonly database: Database,
    private readonly config: Config['webhooks'],
    private readonly log: FastifyBaseLogger,
    private readonly outbound: Outbound,
    /** Opens the endpoints' signing secrets (sealed with SECRETS_ENCRYPTION_KEY). */
    private readonly secretBox: SecretBox,
    private readonly relayIntervalMs = 1000,
  ) {}

  /** A job stuck active this long (its worker died) is failed and retried. */
  private get expireInSeconds(): number {
    return this.config.timeoutSeconds + 5;
  }

  /**
   * Starts the relay and log pruning. The queue itself (pg-boss: its schema, supervision and workers) starts
   * once any application has a webhook endpoint — at once if one exists, else on the relay pass that first
   * finds one. A deployment no one has added an endpoint to never pays for it; the relay passes until then
   * are one index probe each.
   */
  async start(): Promise<void> {
    if (await this.anyEndpoint()) await this.startQueue();
    this.scheduleRelay();
    this.pruneTimer = setInterval(() => void this.pruneDeliveries().catch((error: unknown) => this.log.warn({ err: error }, 'webhook log pruning')), PRUNE_EVERY_MS);
    this.pruneTimer.unref();
  }

  private async anyEndpoint(): Promise<boolean> {
    const { rows } = await this.database.executeSql('select exists (select 1 from webhooks) as "any"');
    return (rows[0] as { any: boolean }).any;
  }

  /** The queue, started once however many passes ask for it at the same time. */
  private startQueue(): Promise<PgBoss> {
    this.starting ??= this.createQueue().catch((error: unknown) => {
      this.starting = null;
      throw error;
    });
    return this.starting;
  }

  private async createQueue(): Promise<PgBoss> {
    const boss = new PgBoss({
      db: { executeSql: (text, values) => this.database.executeSql(text, values) as Promise<{ rows: never[] }> },
      backend: this.database.kind === 'pglite' ? 'pglite' : 'postgres',
      schema: QUEUE_SCHEMA,
      migrate: true,
      supervise: true,
      schedule: false,
      // Expired jobs (their worker died) are found by the supervision pass, on whichever instance runs it.
      superviseIntervalSeconds: Math.min(60, this.expireInSeconds),
      monitorIntervalSeconds: Math.min(60, this.expireInSeconds),
    });
    boss.on('error', (error: Error) => this.log.warn({ err: error }, 'webhook queue'));
    await boss.start();
    const queue = { retryLimit: this.config.retryLimit, retryDelay: this.config.retryDelaySeconds, retryBackoff: true, expireInSeconds: this.expireInSeconds };
    await retryOnDeadlock(() => boss.createQueue(DELIVERY_QUEUE, queue));
    // createQueue leaves an existing queue as it was: the settings follow the configuration.
    await retryOnDeadlock(() => boss.updateQueue(DELIVERY_QUEUE, queue));
    this.boss = boss;
    if (this.config.worker) {
      // Several workers of one job each: a slow receiver holds up only its own delivery, and at most
      // PER_APPLICATION_CONCURRENCY of them work for one application at a time.
      for (let i = 0; i < WORKERS; i++) {
        // They poll slowly (retries come due on their own time); the relay wakes them for new jobs, and a
        // worker that just finished one fetches again at once (a backlog drains at the receiver's pace).
        let id = '';
        id = await boss.work<DeliveryJob, void, WorkerOptions>(
          DELIVERY_QUEUE,
          { batchSize: 1, pollingIntervalSeconds: 2, includeMetadata: true, groupConcurrency: PER_APPLICATION_CONCURRENCY },
          async ([job]) => {
            try {
              if (job) await this.deliver(job.data.deliveryId, job.retryCount >= job.retryLimit);
            } finally {
              boss.notifyWorker(id);
            }
          },
        );
        this.workerIds.push(id);
      }
    }
    return boss;
  }

  /**
   * Deletes finished deliveries (succeeded or failed, handed over) older than the retention, a bounded
   * batch at a time; answers how many went. Owed and retrying ones are never pruned.
   */
  async pruneDeliveries(): Promise<number> {
    const gone = await this.database.executeSql(
      `delete from webhook_deliveries where id in (
         select id from webhook_deliveries
         where created_at < now() - make_interval(days => $1) and relay_after is null and status in ('succeeded', 'failed')
         limit 1000
       ) returning id`,
      [DELIVERY_RETENTION_DAYS],
    );
    return gone.rows.length;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.relayTimer);
    clearInterval(this.pruneTimer);
    await this.relaying;
    await this.boss?.stop({ graceful: true, timeout: 5_000 });
    this.boss = null;
  }

  /** Runs the relay now (after a change that owes deliveries, and on a timer for anything left). */
  relayNow(): Promise<void> {
    this.relaying ??= this.relay()
      .catch((error: unknown) => this.log.warn({ err: error }, 'webhook relay'))
      .finally(() => (this.relaying = null));
    return this.relaying;
  }

  private scheduleRelay(): void {
    if (this.stopped) return;
    this.relayTimer = setTimeout(() => void this.relayNow().finally(() => this.scheduleRelay()), this.relayIntervalMs);
    this.relayTimer.unref();
  }

  /**
   * application.updated owed by history entries (`announce`, set in the change's own statement while a
   * webhook is subscribed: history.service.ts and the history trigger) becomes one delivery per endpoint
   * that was subscribed when the change was made and still is, and the entry is cleared, in one
   * statement: a relay that dies half-way leaves both for the next. An endpoint being deleted meanwhile
   * is waited for (key share) and skipped, not a foreign-key error. The deliveries are made already
   * claimed by this relay (a lease, as the claim below takes) and handed to the queue at once: a relay
   * that dies before that leaves them to the next one when the lease ends. Answers how many entries it
   * took.
   */
  async expandAnnouncements(): Promise<number> {
    const { rows } = await this.database.executeSql(
      `with owed as (
         select application_id, at, seq, announce from application_changes
         where announce is not null order by seq limit $1 for update skip locked
       ), cleared as (
         update application_changes c set announce = null from owed
         where c.application_id = owed.application_id and c.at = owed.at and c.seq = owed.seq
       ), queued as (
         insert into webhook_deliveries (webhook_id, application_id, event_type, payload, relay_after)
         select w.id, o.application_id, 'application.updated', jsonb_build_object(
           'type', 'application.updated', 'timestamp', ${eventTimestampOf('o.at')}, 'data', o.announce),
           now() + make_interval(secs => $2)
         from owed o join webhooks w on w.application_id = o.application_id and w.events ? 'application.updated' and w.created_at <= o.at
         for key share of w
         returning id, application_id
       )
       select (select count(*)::int from owed) as taken,
         (select coalesce(json_agg(json_build_object('id', id, 'applicationId', application_id)), '[]'::json) from queued) as claimed`,
      [RELAY_BATCH, RELAY_LEASE_SECONDS],
    );
    const { taken, claimed } = rows[0] as { taken: number; claimed: Claimed[] };
    if (claimed.length > 0 && this.boss) await this.handOver(this.boss, claimed);
    return taken;
  }

  /** Turns owed events into deliveries, claims owed deliveries (a lease), queues each, then marks them handed over. */
  private async relay(): Promise<void> {
    if (!this.boss && !(await this.anyEndpoint())) return;
    const boss = this.boss ?? (await this.startQueue());
    if (this.stopped) return;
    try {
      while ((await this.expandAnnouncements()) === RELAY_BATCH && !this.stopped);
    } catch (error) {
      // Owed entries stay owed for the next pass (and deliveries made, claimed, for the next claim after
      // their lease); the deliveries already owed go out now regardless.
      this.log.warn({ err: error }, 'webhook relay: expanding application.updated');
    }
    for (;;) {
      const { rows } = await this.database.executeSql(
        `update webhook_deliveries set relay_after = now() + make_interval(secs => $1) where id in (
           select id from webhook_deliveries where relay_after <= now() order by relay_after limit $2 for update skip locked
         ) returning id, application_id as "applicationId"`,
        [RELAY_LEASE_SECONDS, RELAY_BATCH],
      );
      const claimed = rows as Claimed[];
      if (claimed.length === 0) return;
      await this.handOver(boss, claimed);
      if (claimed.length < RELAY_BATCH || this.stopped) return;
    }
  }

  /**
   * Queues claimed deliveries, one statement for the batch (each job takes the queue's retry and expiry
   * settings, and its application as its group), then marks them handed over.
   */
  private async handOver(boss: PgBoss, claimed: Claimed[]): Promise<void> {
    await boss.insert(
      DELIVERY_QUEUE,
      claimed.map(({ id, applicationId }) => ({ data: { deliveryId: id } satisfies DeliveryJob, group: { id: applicationId } })),
    );
    const ids = claimed.map((c) => c.id);
    await this.database.db.update(webhookDeliveries).set({ relayAfter: null }).where(inArray(webhookDeliveries.id, ids));
    for (const id of this.workerIds) boss.notifyWorker(id);
  }

  /** One attempt. Throws when it failed and may be retried, so pg-boss schedules the retry. */
  private async deliver(deliveryId: string, lastAttempt: boolean): Promise<void> {
    const db = this.database.db;
    const [row] = await db
      .select({ delivery: webhookDeliveries, url: webhooks.url, secret: webhooks.secret })
      .from(webhookDeliveries)
      .innerJoin(webhooks, eq(webhooks.id, webhookDeliveries.webhookId))
      .where(eq(webhookDeliveries.id, deliveryId))
      .limit(1);
    // The endpoint was deleted (its deliveries with it), or this is a repeat of a delivery that succeeded.
    if (!row || row.delivery.status === 'succeeded') return;
    const body = JSON.stringify(row.delivery.payload);
    const timestamp = Math.floor(Date.now() / 1000);
    const secret = this.secretBox.open(row.secret);
    let responseStatus: number | null = null;
    let error: string | null = null;
    try {
      const response = await this.outbound.safeFetch(row.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Latchkey-Webhooks/1',
          'webhook-id': deliveryId,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signPayload(secret, deliveryId, timestamp, body),
        },
        body,
        timeoutMs: this.config.timeoutSeconds * 1000,
        maxBytes: MAX_ANSWER_BYTES,
      });
      responseStatus = response.status;
    } catch (e) {
      error = e instanceof Error ? e.message : String(e);
    }
    const ok = responseStatus !== null && responseStatus >= 200 && responseStatus < 300;
    const status = ok ? 'succeeded' : lastAttempt ? 'failed' : 'retrying';
    await db
      .update(webhookDeliveries)
      .set({ status, attempts: sql`${webhookDeliveries.attempts} + 1`, responseStatus, lastError: error, updatedAt: sql`now()` })
      .where(eq(webhookDeliveries.id, deliveryId));
    this.onAttempt?.(status);
    if (!ok && !lastAttempt) throw new Error(error ?? `answered ${responseStatus}`);
  }
}
