import { describe, expect, it } from 'vitest';
import { deviceErrors, operationErrors, ruleProblem } from '@latchkey/contract';
import { AppError } from '../errors.js';
import { OperationRefusal, deviceRefusalKind, failedOutcome, operationTypeLabel, refusal, refusedOutcome, ruleRefusal } from './operation-outcome.js';

const jwsWith = (operation: unknown) => `e30.${Buffer.from(JSON.stringify({ operation })).toString('base64url')}.sig`;

describe('an operation’s outcome', () => {
  it('gives a refusal the kind it was made with, never one read from its reason', () => {
    expect(refusal('noAccess', 403, 'UNLOCK')).toMatchObject({ kind: 'noAccess', message: operationErrors.noAccess, statusCode: 403 });
    expect(ruleRefusal(ruleProblem('lockHours', '(09:00–17:00)'), 403, 'UNLOCK')).toMatchObject({ kind: 'lockHours', message: `${operationErrors.lockHours} (09:00–17:00)` });
    expect(new OperationRefusal(403, 'the bolt is jammed', 'UNLOCK', { kind: 'other' }).kind).toBe('other');
    expect(new OperationRefusal(400, `${operationErrors.operationInvalid}: duration`, 'UNLOCK', { kind: 'operationInvalid' }).kind).toBe('operationInvalid');
    // A reason that reads like a catalogue text is still of the kind it was made with.
    expect(new OperationRefusal(403, operationErrors.replayed, 'UNLOCK', { kind: 'other' }).kind).toBe('other');
    expect(new OperationRefusal(403, `${operationErrors.lockHours} (09:00–17:00)`, 'UNLOCK', { kind: 'other' }).kind).toBe('other');
  });

  it('counts a device’s refusal by the catalogue key it named: no key, or one the catalogue does not have, is other', () => {
    expect(deviceRefusalKind('shareEnded')).toBe('shareEnded');
    expect(deviceRefusalKind(undefined)).toBe('other');
    expect(deviceRefusalKind(operationErrors.shareEnded)).toBe('other');
    expect(deviceRefusalKind('boltJammed')).toBe('other');
    expect(deviceRefusalKind('toString')).toBe('other');
    expect(deviceRefusalKind('__proto__')).toBe('other');
  });

  it('counts a lock that could not be reached or did not answer as unavailable, not refused', () => {
    expect(refusedOutcome('MUTATE_LOCK', new OperationRefusal(503, deviceErrors.offline, 'UNLOCK', { charged: false }))).toEqual({ outcome: 'unavailable', type: 'MUTATE_LOCK', reason: 'offline' });
    expect(refusedOutcome('MUTATE_LOCK', new OperationRefusal(504, deviceErrors.noAnswer, 'UNLOCK', { charged: false }))).toEqual({ outcome: 'unavailable', type: 'MUTATE_LOCK', reason: 'timeout' });
    expect(refusedOutcome('ADD_USER', refusal('adminOnly', 403, 'SHARE'))).toEqual({ outcome: 'refused', type: 'ADD_USER', reason: 'adminOnly' });
  });

  it('counts a request refused before it was decided by its status', () => {
    expect(failedOutcome('unknown', undefined, 401)).toEqual({ outcome: 'refused', type: 'unknown', reason: 'unauthenticated' });
    expect(failedOutcome('unknown', new Error('body'), 400)).toEqual({ outcome: 'refused', type: 'unknown', reason: 'invalid_request' });
    expect(failedOutcome('MUTATE_LOCK', new AppError(429, 'slow down'))).toEqual({ outcome: 'refused', type: 'MUTATE_LOCK', reason: 'rate_limited' });
    expect(failedOutcome('MUTATE_LOCK', new AppError(503, 'busy'))).toEqual({ outcome: 'unavailable', type: 'MUTATE_LOCK', reason: 'offline' });
    expect(failedOutcome('MUTATE_LOCK', new Error('database down'))).toEqual({ outcome: 'error', type: 'MUTATE_LOCK' });
    // An error that is no decided refusal has no kind, whatever its message says.
    expect(failedOutcome('MUTATE_LOCK', new AppError(403, operationErrors.noAccess))).toEqual({ outcome: 'refused', type: 'MUTATE_LOCK', reason: 'other' });
  });

  it('labels the type from the operation as sent, one of the known types or unknown', () => {
    expect(operationTypeLabel(jwsWith({ type: 'MUTATE_LOCK' }))).toBe('MUTATE_LOCK');
    expect(operationTypeLabel(`"${jwsWith({ type: 'ADD_USER' })}"`)).toBe('ADD_USER');
    expect(operationTypeLabel(jwsWith({ type: 'OPEN_SESAME' }))).toBe('unknown');
    expect(operationTypeLabel('not-a-jws')).toBe('unknown');
    expect(operationTypeLabel(undefined)).toBe('unknown');
  });
});
