import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { deviceLogReasons, deviceResultSchema, operationErrors } from '@latchkey/contract';
import type { Db } from '../../../db/client.js';
import type { DeviceBus } from '../../../plugins/mqtt/bus.js';
import { OperationRefusal, refusedOutcome, type VerifiedOperation } from '../../../lib/operation-outcome.js';
import type { DeviceLockAccess } from '../../operations/operations.service.js';
import { readJson } from './device-messages.js';
import { DeviceOperationRelay } from './relay.js';

/**
 * A device's refusal is of the kind its answer names (`reasonKey`, a key of the operation catalogue), read
 * through the parsing the device runtime applies to `…/result` (the contract's schema). Its reason is the
 * device's text, answered and logged as it is and never read for a kind: without a key (an older agent) or
 * with a key the catalogue does not have, the refusal is `other`.
 */
const deviceId = randomUUID();
const access = { lock: { id: randomUUID(), applicationId: randomUUID(), name: 'Door' }, device: { id: deviceId } } as unknown as DeviceLockAccess;
const verified: VerifiedOperation = { operation: { type: 'MUTATE_LOCK', locked: false }, location: undefined, useKey: 'jti:test', rememberUntil: 0, certifiedFrom: 0 };
const actor = { userId: randomUUID(), email: null, displayName: null };

/** What relaying an unlock ends in when its device answers `answer` on `…/result`, and what the relay warned of. */
async function refusalFor(answer: Record<string, unknown>): Promise<{ refusal: OperationRefusal; warnings: unknown[] }> {
  const warnings: unknown[] = [];
  const log = { info: () => {}, warn: (fields: unknown) => void warnings.push(fields) };
  const bus = {
    kind: 'embedded',
    publish: async (_topic: string, payload: string | Buffer) => {
      const { requestId } = JSON.parse(payload.toString()) as { requestId: string };
      const result = readJson(Buffer.from(JSON.stringify({ requestId, outcome: 'REFUSED', ...answer })), deviceResultSchema);
      if (!result.ok) throw new Error(`the answer does not parse: ${result.problem}`);
      relay.onResult(deviceId, result.value);
    },
  } as unknown as DeviceBus;
  const relay = new DeviceOperationRelay(null as unknown as Db, bus, 5_000, log);
  const refusal: unknown = await relay.relay(access, verified, 'a.b.c', actor).then(
    () => null,
    (error: unknown) => error,
  );
  if (!(refusal instanceof OperationRefusal)) throw new Error(`not refused: ${String(refusal)}`);
  return { refusal, warnings };
}

describe('a device’s refusal, counted by the key it names', () => {
  it('is the catalogue key the device named, its reason answered as the device wrote it', async () => {
    const { refusal } = await refusalFor({ reason: operationErrors.shareEnded, reasonKey: 'shareEnded' });
    expect(refusal).toMatchObject({ statusCode: 403, message: operationErrors.shareEnded, kind: 'shareEnded' });
    expect(refusal.options.logReason).toBe(deviceLogReasons.refused(operationErrors.shareEnded));
    expect(refusedOutcome('MUTATE_LOCK', refusal)).toEqual({ outcome: 'refused', type: 'MUTATE_LOCK', reason: 'shareEnded' });

    // The key decides, whatever the text: an agent whose wording differs is counted by its key.
    const worded = await refusalFor({ reason: 'Outside the lock’s hours', reasonKey: 'lockHours' });
    expect(worded.refusal).toMatchObject({ message: 'Outside the lock’s hours', kind: 'lockHours' });
  });

  it('is other without a key, even when its reason is a catalogue message word for word', async () => {
    const { refusal, warnings } = await refusalFor({ reason: operationErrors.shareEnded });
    expect(refusal).toMatchObject({ statusCode: 403, message: operationErrors.shareEnded, kind: 'other' });
    expect(refusedOutcome('MUTATE_LOCK', refusal)).toEqual({ outcome: 'refused', type: 'MUTATE_LOCK', reason: 'other' });
    expect((await refusalFor({ reason: `${operationErrors.locationTooFar} (120 m away; the lock allows 50 m)` })).refusal.kind).toBe('other');
    expect(warnings).toEqual([]);
  });

  it('is other with a key the catalogue does not have, the answer still taken and the key warned of', async () => {
    const { refusal, warnings } = await refusalFor({ reason: operationErrors.noAccess, reasonKey: 'boltJammed' });
    expect(refusal).toMatchObject({ statusCode: 403, message: operationErrors.noAccess, kind: 'other' });
    expect(warnings).toEqual([expect.objectContaining({ deviceId, reasonKey: 'boltJammed' })]);
    expect((await refusalFor({ reason: operationErrors.noAccess, reasonKey: 'constructor' })).refusal.kind).toBe('other');
  });
});
