import { Readable } from 'node:stream';
import { and, asc, eq, gte, lte, sql, type SQL } from 'drizzle-orm';
import {
  ACTIVITY_EXPORT_COLUMNS,
  ACTIVITY_EXPORT_RESULTS,
  LOCK_ACTIVITY_EXPORT_COLUMNS,
  type ActivityExportColumn,
  type ActivityExportQuery,
} from '@latchkey/contract';
import type { Db } from '../../db/client.js';
import { lockActivity, locks } from '../../db/schema.js';
import { cursorTimeOf } from '../../lib/keyset-cursor.js';

/** Entries read per statement: each batch is one range scan of an (…, at, seq) index, resumed after the last. */
export const ACTIVITY_EXPORT_BATCH = 5_000;

/**
 * Bytes the stream reads ahead of what the connection has taken: at most one batch beyond this is held
 * while a slow client reads, whatever the export's size.
 */
const READ_AHEAD_BYTES = 64 * 1024;

/** One lock's activity, or every lock's of an application (with each entry's lock name). */
export type ExportScope = { lockId: string } | { applicationId: string };

type Cell = string | number | boolean | null;

/** A spreadsheet reads a cell starting with one of these as a formula (or strips it and then does). */
const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/**
 * One CSV field (RFC 4180): null is empty; a text a spreadsheet would take for a formula gets a leading
 * apostrophe, so it is shown as text and never run; a field holding a comma, a quote or a line break is
 * quoted, its quotes doubled.
 */
export function csvCell(value: Cell): string {
  if (value === null) return '';
  let text = String(value);
  if (FORMULA_START.test(text)) text = `'${text}`;
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One record, CRLF-terminated. */
export function csvLine(cells: readonly Cell[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}

const time = cursorTimeOf(lockActivity.at);
const entryColumns = {
  time,
  seq: lockActivity.seq,
  lockId: lockActivity.lockId,
  type: lockActivity.type,
  rejected: lockActivity.rejected,
  reason: lockActivity.reason,
  method: lockActivity.method,
  source: lockActivity.source,
  offline: lockActivity.offline,
  actorUserId: lockActivity.actorUserId,
  actorEmail: lockActivity.actorEmail,
  actorDisplayName: lockActivity.actorDisplayName,
  subject: lockActivity.subject,
  accessCodeId: lockActivity.accessCodeId,
  value: lockActivity.value,
  repeats: lockActivity.repeats,
};

interface ExportRow {
  time: string;
  seq: number;
  lockId: string;
  lockName?: string;
  type: string;
  rejected: boolean;
  reason: string | null;
  method: string | null;
  source: string;
  offline: boolean;
  actorUserId: string | null;
  actorEmail: string | null;
  actorDisplayName: string | null;
  subject: string | null;
  accessCodeId: string | null;
  value: number | null;
  repeats: number;
}

const cellOf: Record<ActivityExportColumn, (row: ExportRow) => Cell> = {
  time: (r) => r.time,
  lock_id: (r) => r.lockId,
  lock_name: (r) => r.lockName ?? null,
  type: (r) => r.type,
  result: (r) => (r.rejected ? ACTIVITY_EXPORT_RESULTS.refused : ACTIVITY_EXPORT_RESULTS.accepted),
  reason: (r) => r.reason,
  method: (r) => r.method,
  source: (r) => r.source,
  offline: (r) => r.offline,
  actor_user_id: (r) => r.actorUserId,
  actor_email: (r) => r.actorEmail,
  actor_name: (r) => r.actorDisplayName,
  subject: (r) => r.subject,
  access_code_id: (r) => r.accessCodeId,
  value: (r) => r.value,
  repeats: (r) => r.repeats,
};

export function columnsOf(scope: ExportScope): readonly ActivityExportColumn[] {
  return 'lockId' in scope ? LOCK_ACTIVITY_EXPORT_COLUMNS : ACTIVITY_EXPORT_COLUMNS;
}

/**
 * The export's text, oldest entry first (by time, then by the order entries were logged): the header, then
 * one string per batch. Keyset paging over (at, seq) — each batch starts after the previous batch's last
 * entry, to the microsecond — so only one batch is ever in memory and batch N costs what batch 1 does.
 * Nothing is read ahead of the consumer: the next batch is queried when the stream asks for more. The
 * batches are separate statements (no transaction is held open while a client downloads), so an entry
 * logged while the export runs is included if it sorts after the batch being read.
 */
export async function* activityCsv(db: Db, scope: ExportScope, query: ActivityExportQuery, batchSize = ACTIVITY_EXPORT_BATCH): AsyncGenerator<string> {
  const columns = columnsOf(scope);
  const cells = columns.map((c) => cellOf[c]);
  yield csvLine(columns);
  const bounds: SQL[] = ['lockId' in scope ? eq(lockActivity.lockId, scope.lockId) : eq(lockActivity.applicationId, scope.applicationId)];
  if (query.start !== undefined) bounds.push(gte(lockActivity.at, new Date(query.start * 1000)));
  if (query.end !== undefined) bounds.push(lte(lockActivity.at, new Date(query.end * 1000)));
  let after: { time: string; seq: number } | null = null;
  for (;;) {
    const conditions = after ? [...bounds, sql`(${lockActivity.at}, ${lockActivity.seq}) > (${after.time}::timestamptz, ${after.seq}::bigint)`] : bounds;
    const rows: ExportRow[] =
      'lockId' in scope
        ? await db
            .select(entryColumns)
            .from(lockActivity)
            .where(and(...conditions))
            .orderBy(asc(lockActivity.at), asc(lockActivity.seq))
            .limit(batchSize)
        : await db
            .select({ ...entryColumns, lockName: locks.name })
            .from(lockActivity)
            .innerJoin(locks, eq(locks.id, lockActivity.lockId))
            .where(and(...conditions))
            .orderBy(asc(lockActivity.at), asc(lockActivity.seq))
            .limit(batchSize);
    if (rows.length === 0) return;
    let text = '';
    for (const row of rows) text += csvLine(cells.map((cell) => cell(row)));
    yield text;
    if (rows.length < batchSize) return;
    const last = rows[rows.length - 1]!;
    after = { time: last.time, seq: last.seq };
  }
}

/**
 * The export as a byte stream with backpressure: a batch is read only when the connection has taken what
 * came before (up to READ_AHEAD_BYTES buffered); a closed connection ends the reading.
 */
export function activityCsvStream(db: Db, scope: ExportScope, query: ActivityExportQuery): Readable {
  return Readable.from(activityCsv(db, scope, query), { objectMode: false, highWaterMark: READ_AHEAD_BYTES });
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
