import { randomBytes, randomInt } from 'node:crypto';
import { and, asc, eq, isNotNull, sql } from 'drizzle-orm';
import {
  ACCESS_CODE_GENERATED_DIGITS,
  MAX_ACCESS_CODES_PER_LOCK,
  accessCodeErrors,
  accessCodeLogReasons,
  accessCodeMessages,
  lockErrors,
  type AccessCode,
  type AccessCodeStatus,
  type CreateAccessCode,
  type DeviceConfig,
  type DeviceConfigAccessCode,
  isUuid,
} from '@latchkey/contract';
import { hashAccessCode, offlineAccessCode } from '@latchkey/device';
import type { Db } from '../../db/client.js';
import { accessCodes, lockDevices } from '../../db/schema.js';
import { AppError, badRequest, conflict, notFound } from '../../errors.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { LockUser } from '../../plugins/lock-user-auth.js';
import { LOCKS_CHANNEL } from '../../plugins/live-events.js';
import { recordActivity, type ActivityActor } from '../activity/activity.service.js';
import { getLockRow, type LockDeviceRow, type LockRow } from '../locks/locks.service.js';
import { getLockAccess } from '../operations/devices.service.js';
import type { VirtualOfflineSecrets } from './offline-secrets.service.js';

/**
 * A lock's access codes: PIN codes its keypad takes. Each code is kept sealed (lib/secret-box.ts), so
 * owners and the lock's ADMINs can be shown it again and nothing else can read it.
 *
 * - online: 4–8 digits (6 made up when none is given), unique among the lock's current online codes;
 *   carried to the device in its signed config as a salted hash. `setting` until the device says it holds
 *   a config version that has it (lock_devices.config_acked_version), then `set`; on a virtual lock `set`.
 * - offline: computed from the lock's offline-code secret for a window of whole hours (@latchkey/device's
 *   offlineAccessCode), so the door checks it with no network; `set` at once. Withdrawn, it rides in the
 *   config's `withdrawnOfflineCodes` until its end.
 *
 * Each create and withdrawal is a lock-channel notice (`<applicationId> <lockId> access_code <id>`, at
 * commit): the device's config is published again and a virtual lock's rebuilt, on every instance.
 */

type Row = typeof accessCodes.$inferSelect;

/** A lock as the codes see it: the row and its provisioned device (null: a virtual lock). */
export interface CodeLock {
  lock: LockRow;
  device: LockDeviceRow | null;
}

export interface AccessCodeDeps {
  db: Db;
  box: SecretBox;
  virtualSecrets: VirtualOfflineSecrets;
}

const seconds = (d: Date | null) => (d ? Math.floor(d.getTime() / 1000) : null);
const date = (s: number | null | undefined) => (s === null || s === undefined ? null : new Date(s * 1000));

async function provisionedDevice(db: Db, lockId: string): Promise<LockDeviceRow | null> {
  const [device] = await db
    .select()
    .from(lockDevices)
    .where(and(eq(lockDevices.lockId, lockId), isNotNull(lockDevices.provisionedAt)))
    .limit(1);
  return device ?? null;
}

/** The owner's lock (another application's, or none, is the same 404). */
export async function ownerCodeLock(db: Db, applicationId: string, lockId: string): Promise<CodeLock> {
  const lock = await getLockRow(db, applicationId, lockId);
  return { lock, device: await provisionedDevice(db, lock.id) };
}

/**
 * The lock of a lock user who is its ADMIN now (an owner of its application is one): no access is 404, a
 * USER share or an ADMIN share outside its bounds is 403.
 */
export async function adminCodeLock(db: Db, user: LockUser, lockId: string): Promise<CodeLock> {
  const access = await getLockAccess(db, user, lockId);
  if (!access?.role) throw notFound(lockErrors.lockNotFound);
  const now = Date.now();
  const within = (access.terms.start === null || access.terms.start <= now) && (access.terms.end === null || access.terms.end > now);
  if (access.role !== 'ADMIN' || !within) throw new AppError(403, accessCodeErrors.notAdmin);
  return { lock: access.lock, device: access.device ?? null };
}

/** Who the log names for a lock user. */
export const lockUserActor = (user: LockUser): ActivityActor => ({ userId: user.id, email: user.email, displayName: user.displayName });

/** The codes a lock lists: current ones, and withdrawn offline ones until their end (the device still refuses them). */
const listed = (lockId: string) => sql`${accessCodes.lockId} = ${lockId}
  and (${accessCodes.endsAt} is null or ${accessCodes.endsAt} > now())
  and (${accessCodes.withdrawnAt} is null or ${accessCodes.kind} = 'offline')`;

function statusOf(row: Row, target: CodeLock): AccessCodeStatus {
  if (row.withdrawnAt) return 'withdrawn';
  if (row.kind === 'offline' || !target.device) return 'set';
  return row.configVersion !== null && target.device.configAckedVersion >= row.configVersion ? 'set' : 'setting';
}

function toAccessCode(row: Row, target: CodeLock, box: SecretBox): AccessCode {
  return {
    accessCodeId: row.id,
    lockId: row.lockId,
    name: row.name,
    code: box.open(row.sealedCode),
    kind: row.kind,
    start: seconds(row.startsAt),
    end: seconds(row.endsAt),
    status: statusOf(row, target),
    createdAt: seconds(row.createdAt)!,
  };
}

export async function listAccessCodes(db: Db, box: SecretBox, target: CodeLock): Promise<AccessCode[]> {
  const rows = await db.select().from(accessCodes).where(listed(target.lock.id)).orderBy(asc(accessCodes.createdAt), asc(accessCodes.id));
  return rows.map((row) => toAccessCode(row, target, box));
}

/** The lock's offline-code secret: its device's own, or the one derived for a virtual lock. */
async function offlineSecretOf(deps: AccessCodeDeps, target: CodeLock): Promise<string> {
  if (!target.device) return deps.virtualSecrets.of(target.lock.id);
  if (!target.device.offlineCodeSecret) throw conflict(accessCodeErrors.noOfflineSecret);
  return deps.box.open(target.device.offlineCodeSecret);
}

/** A made-up online code: 6 random digits none of the lock's current codes has. */
function generateCode(taken: Set<string>): string {
  for (;;) {
    const code = String(randomInt(0, 10 ** ACCESS_CODE_GENERATED_DIGITS)).padStart(ACCESS_CODE_GENERATED_DIGITS, '0');
    if (!taken.has(code)) return code;
  }
}

/** Tells every instance at commit: the lock's device config is published again, a virtual lock's rebuilt. */
const notifyCodes = (tx: Db, lock: LockRow, accessCodeId: string) =>
  tx.execute(sql`select pg_notify(${LOCKS_CHANNEL}, ${`${lock.applicationId} ${lock.id} access_code ${accessCodeId}`})`);

/**
 * Creates a code. One create or withdrawal per lock at a time (a transaction-scoped advisory lock), so two
 * owners typing the same digits at once get one code and one 409.
 */
export async function createAccessCode(deps: AccessCodeDeps, target: CodeLock, input: CreateAccessCode, actor: ActivityActor): Promise<AccessCode> {
  const { db, box } = deps;
  const { lock } = target;
  const nowS = Date.now() / 1000;
  if (input.end != null && input.end <= nowS) throw badRequest(accessCodeMessages.endPassed);
  // Computed before the transaction: the virtual secret may be read (or made) once, in its own statement.
  const offlineCode = input.kind === 'offline' ? offlineAccessCode(await offlineSecretOf(deps, target), lock.id, input.start!, input.end!) : null;
  const row = await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`access-codes:${lock.id}`}))`);
    const current = await tx.select().from(accessCodes).where(listed(lock.id));
    if (current.length >= MAX_ACCESS_CODES_PER_LOCK) throw conflict(accessCodeErrors.tooMany);
    let code: string;
    if (offlineCode !== null) {
      // An offline code is a function of its window: one with the same start and end is the same code.
      const same = current.find((c) => c.kind === 'offline' && seconds(c.startsAt) === input.start && seconds(c.endsAt) === input.end);
      if (same) throw conflict(same.withdrawnAt ? accessCodeErrors.offlineWindowWithdrawn : accessCodeErrors.clash);
      code = offlineCode;
    } else {
      // Offline codes have 10 digits and online ones at most 8: only the online codes can clash.
      const taken = new Set(current.filter((c) => c.kind === 'online' && !c.withdrawnAt).map((c) => box.open(c.sealedCode)));
      if (input.code !== undefined && taken.has(input.code)) throw conflict(accessCodeErrors.clash);
      code = input.code ?? generateCode(taken);
    }
    const [inserted] = await tx
      .insert(accessCodes)
      .values({
        lockId: lock.id,
        applicationId: lock.applicationId,
        name: input.name,
        kind: input.kind,
        sealedCode: box.seal(code),
        startsAt: date(input.start),
        endsAt: date(input.end),
        createdBy: actor.userId,
      })
      .returning();
    await recordActivity(tx, {
      lockId: lock.id,
      applicationId: lock.applicationId,
      type: 'ACCESS_CODE',
      actor,
      subject: input.name,
      reason: input.kind === 'offline' ? accessCodeLogReasons.createdOffline : accessCodeLogReasons.createdOnline,
      accessCodeId: inserted!.id,
    });
    await notifyCodes(tx, lock, inserted!.id);
    return inserted!;
  });
  return toAccessCode(row, target, box);
}

/**
 * Withdraws a code: an online one leaves the device's config, an offline one joins its withdrawn list
 * until its end. A code already withdrawn, or of another lock, is 404.
 */
export async function withdrawAccessCode(deps: AccessCodeDeps, target: CodeLock, accessCodeId: string, actor: ActivityActor): Promise<void> {
  const { lock } = target;
  if (!isUuid(accessCodeId)) throw notFound(accessCodeErrors.notFound);
  await deps.db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`access-codes:${lock.id}`}))`);
    const [withdrawn] = await tx
      .update(accessCodes)
      .set({ withdrawnAt: sql`now()` })
      .where(and(eq(accessCodes.id, accessCodeId), eq(accessCodes.lockId, lock.id), sql`${accessCodes.withdrawnAt} is null`))
      .returning();
    if (!withdrawn) throw notFound(accessCodeErrors.notFound);
    await recordActivity(tx, {
      lockId: lock.id,
      applicationId: lock.applicationId,
      type: 'ACCESS_CODE',
      actor,
      subject: withdrawn.name,
      reason: accessCodeLogReasons.withdrawn,
      accessCodeId: withdrawn.id,
    });
    await notifyCodes(tx, lock, withdrawn.id);
  });
}

/** What a lock's config says of its codes: a fresh salt, the current online codes and the withdrawn offline ones, as salted hashes. */
export type AccessCodesConfig = Pick<DeviceConfig, 'accessCodeSalt' | 'accessCodes' | 'withdrawnOfflineCodes'>;

/**
 * The access-code part of each lock's config, with a salt of its own (16 random bytes): the online codes that
 * have not ended and are not withdrawn, and the offline codes withdrawn before their end. Empty (no members)
 * for a lock without any, so its config reads as it did before codes existed. One statement for all the locks.
 */
export async function accessCodesConfigs(db: Db, box: SecretBox, lockIds: readonly string[]): Promise<Map<string, AccessCodesConfig>> {
  const rows =
    lockIds.length === 0
      ? []
      : await db
          .select()
          .from(accessCodes)
          .where(
            sql`${accessCodes.lockId} in (${sql.join(lockIds.map((id) => sql`${id}::uuid`), sql`, `)}) and (${accessCodes.endsAt} is null or ${accessCodes.endsAt} > now())
              and ((${accessCodes.kind} = 'online' and ${accessCodes.withdrawnAt} is null) or (${accessCodes.kind} = 'offline' and ${accessCodes.withdrawnAt} is not null))`,
          )
          .orderBy(asc(accessCodes.lockId), asc(accessCodes.createdAt), asc(accessCodes.id));
  const byLock = new Map<string, Row[]>();
  for (const row of rows) {
    const codes = byLock.get(row.lockId);
    if (codes) codes.push(row);
    else byLock.set(row.lockId, [row]);
  }
  return new Map(lockIds.map((lockId) => [lockId, codesConfig(box, byLock.get(lockId) ?? [])]));
}

/** One lock's codes (in creation order) as its config carries them. */
function codesConfig(box: SecretBox, rows: Row[]): AccessCodesConfig {
  if (rows.length === 0) return {};
  const salt = randomBytes(16).toString('base64url');
  const entry = (row: Row): DeviceConfigAccessCode => ({ accessCodeId: row.id, hash: hashAccessCode(salt, box.open(row.sealedCode)), start: seconds(row.startsAt), end: seconds(row.endsAt) });
  return {
    accessCodeSalt: salt,
    accessCodes: rows.filter((r) => r.kind === 'online').map(entry),
    withdrawnOfflineCodes: rows.filter((r) => r.kind === 'offline').map(entry),
  };
}

/**
 * A config's content as it is compared with the one last published: the salt and the hashes change with
 * every build, the codes themselves (by id and window) only when one is created, withdrawn or ends.
 */
export function withoutCodeHashes<T extends AccessCodesConfig>(content: T): Omit<T, 'accessCodeSalt'> {
  const { accessCodeSalt: _salt, ...rest } = content;
  const strip = (codes: DeviceConfigAccessCode[] | undefined) => codes?.map(({ hash: _hash, ...code }) => code);
  return { ...rest, ...(content.accessCodes ? { accessCodes: strip(content.accessCodes) } : {}), ...(content.withdrawnOfflineCodes ? { withdrawnOfflineCodes: strip(content.withdrawnOfflineCodes) } : {}) } as Omit<T, 'accessCodeSalt'>;
}

/** A published config version holds these online codes: each not yet published is `setting` until the device has it. */
export async function recordCodesPublished(db: Db, lockId: string, version: number, accessCodeIds: string[]): Promise<void> {
  if (accessCodeIds.length === 0) return;
  await db.execute(sql`update ${accessCodes} set config_version = ${version}
    where ${accessCodes.lockId} = ${lockId} and ${accessCodes.configVersion} is null
      and ${accessCodes.id} in (${sql.join(accessCodeIds.map((id) => sql`${id}::uuid`), sql`, `)})`);
}

/**
 * The lock's offline-code secret changed: a device was provisioned for it (with a secret of its own), or
 * its device was unbound (a virtual lock again). Offline codes computed from the earlier secret open
 * nothing any more and are removed; every online code waits for the new device to confirm it (its config
 * versions start afresh), or is `set` on the virtual lock.
 */
export async function resetCodesForNewSecret(db: Db, lockId: string): Promise<void> {
  await db.execute(sql`delete from ${accessCodes} where ${accessCodes.lockId} = ${lockId} and ${accessCodes.kind} = 'offline'`);
  await db.execute(sql`update ${accessCodes} set config_version = null where ${accessCodes.lockId} = ${lockId}`);
}

