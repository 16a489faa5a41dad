import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { sql, type SQL } from 'drizzle-orm';
import {
  ACTIVITY_EXPORT_COLUMNS,
  ACTIVITY_EXPORT_RESULTS,
  LOCK_ACTIVITY_EXPORT_COLUMNS,
  type ActivityExportColumn,
  type ActivityExportQuery,
} from '@latchkey/contract';
import type { Db } from '../../db/client.js';

/** Entries read per statement: each batch is one range scan of an (…, at, seq) index, resumed after the last. */
export const ACTIVITY_EXPORT_BATCH = 5_000;

/**
 * Bytes the stream reads ahead of what the connection has taken: at most one batch beyond this is held
 * while a slow client reads, whatever the export's size.
 */
export const READ_AHEAD_BYTES = 64 * 1024;

/** One lock's activity, or every lock's of an application (with each entry's lock name). */
export type ExportScope = { lockId: string } | { applicationId: string };

export function columnsOf(scope: ExportScope): readonly ActivityExportColumn[] {
  return 'lockId' in scope ? LOCK_ACTIVITY_EXPORT_COLUMNS : ACTIVITY_EXPORT_COLUMNS;
}

/**
 * One CSV field (RFC 4180) of a text anyone may have typed, as an SQL expression over `value`: null is empty; a
 * text a spreadsheet would take for a formula (its first character =, +, -, @, a tab or a carriage return)
 * gets a leading apostrophe, so it is shown as text and never run; a field holding a comma, a quote or a
 * line break is quoted, its quotes doubled.
 *
 * The records are made by the database: a batch comes back as one text instead of 16 fields a row for the
 * driver to decode, which is most of an export's time in JavaScript (bench/activity-export.ts).
 */
function textCell(value: string): string {
  const apostrophe = `case when left(${value}, 1) in ('=', '+', '-', '@', E'\\t', E'\\r') then '''' end`;
  return `case when ${value} ~ E'[",\\r\\n]' then concat('"', ${apostrophe}, replace(${value}, '"', '""'), '"') else concat(${apostrophe}, ${value}) end`;
}

/** Each column's field over the batch's row `e` (the entry, `at_text`: its time in UTC to the microsecond, and `lock_name`). */
const fieldOf: Record<ActivityExportColumn, string> = {
  time: 'e.at_text',
  lock_id: 'e.lock_id',
  lock_name: textCell('e.lock_name'),
  type: 'e.type',
  result: `case when e.rejected then '${ACTIVITY_EXPORT_RESULTS.refused}' else '${ACTIVITY_EXPORT_RESULTS.accepted}' end`,
  reason: textCell('e.reason'),
  method: 'e.method',
  source: 'e.source',
  offline: `case when e.offline then 'true' else 'false' end`,
  actor_user_id: 'e.actor_user_id',
  actor_email: textCell('e.actor_email'),
  actor_name: textCell('e.actor_display_name'),
  subject: textCell('e.subject'),
  access_code_id: 'e.access_code_id',
  value: textCell('e.value::text'),
  repeats: 'e.repeats',
};

/** A record: the fields joined by commas, CRLF at the end (concat reads a null as empty). */
const recordOf = (columns: readonly ActivityExportColumn[]) => sql.raw(`concat(${columns.map((c) => fieldOf[c]).join(", ',', ")}, E'\\r\\n')`);
const lockRecord = recordOf(LOCK_ACTIVITY_EXPORT_COLUMNS);
const applicationRecord = recordOf(ACTIVITY_EXPORT_COLUMNS);
const COLUMNS = sql.raw(
  'a.at, a.seq, a.lock_id, a.type, a.rejected, a.reason, a.method, a.source, a.offline, a.actor_user_id, a.actor_email, a.actor_display_name, a.subject, a.access_code_id, a.value, a.repeats',
);
const TIME = sql.raw(`to_char(a.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`);

interface Batch {
  text: string | null;
  rows: number;
  lastTime: string | null;
  lastSeq: string | null;
}

/**
 * The export's text, oldest entry first (by time, then by the order entries were logged): the header, then
 * one string per batch. Keyset paging over (at, seq) — each batch starts after the previous batch's last
 * entry, to the microsecond — so only one batch is ever in memory and batch N costs what batch 1 does.
 * Nothing is read ahead of the consumer: the next batch is queried when the stream asks for more, after
 * the event loop has turned (other requests are served between batches). The
 * batches are separate statements (no transaction is held open while a client downloads), so an entry
 * logged while the export runs is included if it sorts after the batch being read.
 */
export async function* activityCsv(db: Db, scope: ExportScope, query: ActivityExportQuery, batchSize = ACTIVITY_EXPORT_BATCH): AsyncGenerator<string> {
  yield `${columnsOf(scope).join(',')}\r\n`;
  const byLock = 'lockId' in scope;
  const bounds: SQL[] = [byLock ? sql`a.lock_id = ${scope.lockId}::uuid` : sql`a.application_id = ${scope.applicationId}::uuid`];
  if (query.start !== undefined) bounds.push(sql`a.at >= ${new Date(query.start * 1000).toISOString()}::timestamptz`);
  if (query.end !== undefined) bounds.push(sql`a.at <= ${new Date(query.end * 1000).toISOString()}::timestamptz`);
  let after: { time: string; seq: string } | null = null;
  for (;;) {
    // The event loop turns before each batch. An embedded database answers without I/O, and a socket that
    // takes each chunk at once never pushes back, so without this an export would run to its end in one
    // turn, every other request of the instance waiting for it.
    await nextTurn();
    const conditions: SQL[] = after ? [...bounds, sql`(a.at, a.seq) > (${after.time}::timestamptz, ${after.seq}::bigint)`] : bounds;
    const entries: SQL = byLock
      ? sql`select ${COLUMNS}, ${TIME} as at_text from lock_activity a where ${sql.join(conditions, sql` and `)} order by a.at, a.seq limit ${batchSize}`
      : sql`select ${COLUMNS}, ${TIME} as at_text, l.name as lock_name from lock_activity a join locks l on l.id = a.lock_id
            where ${sql.join(conditions, sql` and `)} order by a.at, a.seq limit ${batchSize}`;
    const result: unknown = await db.execute<Record<string, unknown>>(sql`
      select string_agg(${byLock ? lockRecord : applicationRecord}, '' order by e.at, e.seq) as text, count(*)::int as rows,
             (array_agg(e.at_text order by e.at, e.seq))[count(*)] as "lastTime",
             (array_agg(e.seq::text order by e.at, e.seq))[count(*)] as "lastSeq"
      from (${entries}) e`);
    const batch: Batch = (result as unknown as { rows: Batch[] }).rows[0]!;
    if (batch.rows === 0 || batch.text === null) return;
    yield batch.text;
    if (batch.rows < batchSize) return;
    after = { time: batch.lastTime!, seq: batch.lastSeq! };
  }
}

/**
 * The export as a byte stream with backpressure: a batch is read only when the connection has taken what
 * came before (up to READ_AHEAD_BYTES buffered); a closed connection ends the reading.
 */
export function activityCsvStream(db: Db, scope: ExportScope, query: ActivityExportQuery, batchSize = ACTIVITY_EXPORT_BATCH): Readable {
  return Readable.from(activityCsv(db, scope, query, batchSize), { objectMode: false, highWaterMark: READ_AHEAD_BYTES });
}

/** A file name part from a lock's or application's name: lower-case ASCII letters and digits joined by dashes. */
export function slug(name: string, fallback: string): string {
  const text = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/ß/g, 'ss')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/, '');
  return text || fallback;
}

const day = (epochSeconds: number) => new Date(epochSeconds * 1000).toISOString().slice(0, 10);

/**
 * `<name>-activity-<start day>-to-<end day>.csv` (UTC days); without a start `<name>-activity-until-<end day>.csv`;
 * without an end, the end day is the day of the export.
 */
export function exportFileName(name: string, fallback: string, query: ActivityExportQuery, now = Date.now()): string {
  const end = day(query.end ?? now / 1000);
  const range = query.start === undefined ? `until-${end}` : `${day(query.start)}-to-${end}`;
  return `${slug(name, fallback)}-activity-${range}.csv`;
}
