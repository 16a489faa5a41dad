import { lockPath, locksPath } from '../api';
import type { LogRange } from '../log-api';

const rangeQuery = (range: LogRange) => {
  const query = new URLSearchParams();
  if (range.start !== undefined) query.set('start', String(range.start));
  if (range.end !== undefined) query.set('end', String(range.end));
  const qs = query.toString();
  return qs ? `?${qs}` : '';
};

/** The lock's activity as CSV, over the range shown. */
export const lockCsvPath = (appId: string, lockId: string, range: LogRange) => `${lockPath(appId, lockId)}/log.csv${rangeQuery(range)}`;

/** The whole application's activity as CSV (…/application/{id}/log.csv), over a range. */
export const applicationCsvPath = (appId: string, range: LogRange) =>
  `${locksPath(appId).replace(/\/lock$/, '')}/log.csv${rangeQuery(range)}`;
