/**
 * Whether a database error (or one it wraps: drizzle and transactions put the driver's error in `cause`)
 * is a unique-constraint violation (SQLSTATE 23505).
 */
export function isUniqueViolation(error: unknown): boolean {
  for (let e = error as { code?: unknown; cause?: unknown } | undefined, i = 0; e && i < 4; e = e.cause as typeof e, i++) {
    if (e.code === '23505') return true;
  }
  return false;
}
