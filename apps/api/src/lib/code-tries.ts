import { and, eq, isNull, lt, sql } from 'drizzle-orm';
import { KEY_CODE_MAX_ATTEMPTS, accountErrors } from '@latchkey/contract';
import type { Db } from '../db/client.js';
import { accountTokens } from '../db/schema.js';
import { badRequest } from '../errors.js';

/**
 * A wrong emailed code (a key's second factor, a passkey's): one more try counted in its row, on any
 * instance; the last allowed try spends the code. Always throws: `wrong`, or too many tries.
 */
export async function refuseWrongCode(db: Db, tokenId: string, wrong: string): Promise<never> {
  const [counted] = await db
    .update(accountTokens)
    .set({ attempts: sql`${accountTokens.attempts} + 1` })
    .where(and(eq(accountTokens.id, tokenId), isNull(accountTokens.usedAt), lt(accountTokens.attempts, KEY_CODE_MAX_ATTEMPTS)))
    .returning({ attempts: accountTokens.attempts });
  if (!counted || counted.attempts >= KEY_CODE_MAX_ATTEMPTS) {
    await db.update(accountTokens).set({ usedAt: new Date() }).where(eq(accountTokens.id, tokenId));
    throw badRequest(accountErrors.codeTooManyTries);
  }
  throw badRequest(wrong);
}
