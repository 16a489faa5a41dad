import {
  OPERATION_TYPES,
  operationErrors,
  type LockLogEntry,
  type Operation,
  type OperationErrorKey,
  type OperationLocation,
  type RuleProblem,
} from '@latchkey/contract';
import { AppError } from '../errors.js';

/**
 * The vocabulary of a signed operation's outcome, shared by the platform that decides it
 * (modules/operations), the devices that carry it out (modules/devices) and the metrics that count it.
 */

export type LogType = LockLogEntry['type'];

export interface VerifiedOperation {
  operation: Operation;
  location: OperationLocation | undefined;
  /** What may be used once: the user's jti, or the signature itself for clients that send none. */
  useKey: string;
  /** Until when the use key must be remembered (epoch ms): past it, the operation is refused as expired anyway. */
  rememberUntil: number;
  /** The signing certificate's notBefore (epoch ms): refused when earlier than the signer's certifiedAfter. */
  certifiedFrom: number;
}

/**
 * Why an operation was refused: the key of its reason in the contract's operation catalogue, `offline`
 * (its lock could not be reached), `timeout` (its lock did not answer in time), or `other`. It is decided
 * where the refusal is, never read back from the reason's text.
 */
export type RefusalKind = OperationErrorKey | 'offline' | 'timeout' | 'other';

/**
 * The kind a device named for its refusal (a result's `reasonKey`): a key of the operation catalogue, else
 * `other` — an unknown key, or none (an older device, or a reason only a lock gives). Its reason's text is
 * logged as it is and never read for a kind.
 */
export function deviceRefusalKind(reasonKey: string | undefined): RefusalKind {
  return reasonKey !== undefined && Object.hasOwn(operationErrors, reasonKey) ? (reasonKey as OperationErrorKey) : 'other';
}

interface RefusalOptions {
  /** The refusal's kind, decided where the refusal is; 503 is `offline` and 504 `timeout` unless it says otherwise. */
  kind: RefusalKind;
  /** What the log says, when it says more than the answer (e.g. that the lock's device decided). */
  logReason?: string;
  /** false: not the caller's doing (the lock is offline or did not answer), so not charged to its budget. */
  charged?: boolean;
}

/**
 * A refused operation: its status, the reason (logged as is), its kind and what kind of entry it is in the
 * log. Every refusal is made with its kind, but a lock that could not be reached (503) or did not answer (504).
 */
export class OperationRefusal extends AppError {
  readonly kind: RefusalKind;
  readonly options: Omit<RefusalOptions, 'kind'>;
  constructor(statusCode: 503 | 504, reason: string, logType: LogType, options?: Partial<RefusalOptions>);
  constructor(statusCode: number, reason: string, logType: LogType, options: RefusalOptions);
  constructor(
    statusCode: number,
    reason: string,
    readonly logType: LogType,
    options: Partial<RefusalOptions> = {},
  ) {
    super(statusCode, reason);
    const { kind, ...rest } = options;
    this.kind = kind ?? (statusCode === 503 ? 'offline' : statusCode === 504 ? 'timeout' : 'other');
    this.options = rest;
  }
}

/** A refusal whose reason is the contract catalogue's `kind`. */
export function refusal(kind: OperationErrorKey, statusCode: number, logType: LogType): OperationRefusal {
  return new OperationRefusal(statusCode, operationErrors[kind], logType, { kind });
}

/** A refusal for a rule the operation did not meet (the contract's checks): the problem's message, its key the kind. */
export function ruleRefusal(problem: RuleProblem, statusCode: number, logType: LogType): OperationRefusal {
  return new OperationRefusal(statusCode, problem.message, logType, { kind: problem.key });
}

type Json = Record<string, unknown>;

/** The log entry's type, read from the operation before it is verified: it only labels a refusal. */
export function logTypeOf(operation: unknown): LogType {
  const op = operation && typeof operation === 'object' ? (operation as Json) : {};
  if (op.type === 'ADD_USER' || op.type === 'BATCH_ADD_USER') return 'SHARE';
  if (op.type === 'REMOVE_USER') return 'REVOKE';
  if (op.type === 'MUTATE_SETTING') return 'SETTINGS';
  return op.type === 'MUTATE_LOCK' && op.locked === true ? 'LOCK' : 'UNLOCK';
}

const OPERATION_TYPE_SET = new Set<string>(OPERATION_TYPES);

/** The operation type of a compact JWS, read (not trusted) only to label a count: one of OPERATION_TYPES, or `unknown`. */
export function operationTypeLabel(jws: unknown): string {
  try {
    const text = typeof jws === 'string' ? jws.trim().replace(/^"|"$/g, '') : '';
    const payload = text.split('.')[1];
    if (!payload) return 'unknown';
    const claims = JSON.parse(Buffer.from(payload, 'base64').toString('utf8')) as { operation?: { type?: unknown } };
    const type = claims.operation?.type;
    return typeof type === 'string' && OPERATION_TYPE_SET.has(type) ? type : 'unknown';
  } catch {
    return 'unknown';
  }
}

/**
 * How a request to carry out a signed operation ended, as counted: accepted; refused, with its kind (or
 * why it was never decided: rate_limited, unauthenticated, invalid_request); unavailable (its lock could not be
 * reached or did not answer in time); error. `type` is one of OPERATION_TYPES or `unknown`.
 */
export type OperationOutcome =
  | { outcome: 'accepted'; type: string }
  | { outcome: 'refused'; type: string; reason: RefusalKind | 'rate_limited' | 'unauthenticated' | 'invalid_request' }
  | { outcome: 'unavailable'; type: string; reason: 'offline' | 'timeout' }
  | { outcome: 'error'; type: string };

/** Where operation outcomes are counted (plugins/metrics.ts). */
export type OperationRecorder = (outcome: OperationOutcome) => void;

/** The outcome of a refusal the platform decided. */
export function refusedOutcome(type: string, refused: OperationRefusal): OperationOutcome {
  if (refused.kind === 'offline' || refused.kind === 'timeout') return { outcome: 'unavailable', type, reason: refused.kind };
  return { outcome: 'refused', type, reason: refused.kind };
}

/**
 * The outcome of a request that ended in an error other than a decided refusal, by its status: the
 * refusal budget's 429, a request refused before it was decided (401, an invalid body), a service
 * that could not decide in time (503), or anything else (`other`: no refusal was decided, so it has no kind).
 */
export function failedOutcome(type: string, error: unknown, status = error instanceof AppError ? error.statusCode : 500): OperationOutcome {
  if (error instanceof OperationRefusal) return refusedOutcome(type, error);
  if (status === 503 || status === 504) return { outcome: 'unavailable', type, reason: status === 504 ? 'timeout' : 'offline' };
  if (status >= 500) return { outcome: 'error', type };
  if (status === 429) return { outcome: 'refused', type, reason: 'rate_limited' };
  if (status === 401) return { outcome: 'refused', type, reason: 'unauthenticated' };
  if (status === 400 && !(error instanceof AppError)) return { outcome: 'refused', type, reason: 'invalid_request' };
  return { outcome: 'refused', type, reason: 'other' };
}
