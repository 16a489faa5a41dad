import { randomUUID } from 'node:crypto';
import { sql, type SQL } from 'drizzle-orm';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { deviceTopic } from '@latchkey/contract';
import { createTestDatabase } from '../../../test/helpers.js';
import type { Database } from '../../db/client.js';
import { BrokerBridge, type BridgedBroker, type BridgedMessage } from './bridge.js';

const log = pino({ level: 'silent' });

/** A broker that records what the other instances sent it, and holds no device. */
function recordingBroker(received: BridgedMessage[]): BridgedBroker {
  return {
    inject: async (message) => void received.push(message),
    cutLocal: () => {},
    async *retainedOfConnected() {
      yield* [];
    },
  };
}

/** A statement with $n parameters as drizzle SQL, so it can run inside a transaction of drizzle's. */
function withParameters(text: string, values: unknown[]): SQL {
  const parts = text.split(/\$(\d+)/);
  return sql.join(parts.map((part, i) => (i % 2 === 0 ? sql.raw(part) : sql`${values[Number(part) - 1]}`)));
}

/** A statement of the bridge's: whether it wrote (its transaction has an id before commit) and the synchronous_commit its commit obeys. */
interface Commit {
  wrote: boolean;
  setting: string;
}

/** The database as the bridge sees it, running each of its statements in a transaction of its own that records its commit. */
function recordingCommits(database: Database, commits: Commit[]): Pick<Database, 'listen' | 'executeSql'> {
  return {
    listen: (channel, handlers) => database.listen(channel, handlers),
    executeSql: (text, values = []) =>
      database.db.transaction(async (tx) => {
        const result = (await tx.execute(withParameters(text, values))) as unknown as { rows: unknown[] };
        const { rows } = (await tx.execute(
          sql`select pg_current_xact_id_if_assigned() is not null as wrote, current_setting('synchronous_commit') as setting`,
        )) as unknown as { rows: Commit[] };
        commits.push(rows[0]!);
        return { rows: result.rows };
      }),
  };
}

describe('the bridge between the instances’ brokers', () => {
  let database: Database;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    ({ database, drop } = await createTestDatabase());
  });
  afterAll(async () => {
    await database.close();
    await drop();
  });

  it('sends messages, small ones as notices and large ones through the table; storing one commits without waiting for its WAL flush', async () => {
    const commits: Commit[] = [];
    const received: BridgedMessage[] = [];
    const peer = new BrokerBridge(database, recordingBroker(received), log);
    const sender = new BrokerBridge(recordingCommits(database, commits), recordingBroker([]), log);
    await peer.start();
    await sender.start();
    try {
      const deviceId = randomUUID();
      const small: BridgedMessage = { topic: deviceTopic(deviceId, 'op'), payload: Buffer.from(JSON.stringify({ requestId: randomUUID(), jws: 'x' })), retain: false };
      // Longer than a notice may be once in base64.
      const large: BridgedMessage = { topic: deviceTopic(deviceId, 'config'), payload: Buffer.alloc(7000, 'a'), retain: true };
      await Promise.all([sender.forward(small), sender.forward(large)]);
      await vi.waitFor(() => expect(received).toHaveLength(2), { timeout: 10_000 });
      expect(received).toEqual([small, large]);
      const { rows } = await database.executeSql('select topic from mqtt_bridge_messages where topic = $1', [large.topic]);
      expect(rows).toHaveLength(1);
      // Notices alone write no row (their commits need no flush); the stored message's commit waits for none.
      expect(commits.filter((c) => c.wrote)).toEqual([{ wrote: true, setting: 'off' }]);
    } finally {
      await sender.stop();
      await peer.stop();
    }
  });
});
