import type { DeviceStatus, Lock, LockDeviceSummary, LockLogEntry, LockShare } from '@latchkey/contract';
import { openStream } from '../../test/streams';

export const LOCKS = '/api/platform/application/app-1/lock';

export const sampleLock = (over: Partial<Lock> = {}): Lock => ({
  id: 'lock-1',
  applicationId: 'app-1',
  name: 'Front Door',
  colour: null,
  settings: { unlockTime: 5, usageRequirements: {} },
  state: { locked: true, connected: true, unlockedUntil: null },
  createdAt: 1_700_000_000,
  ...over,
});

/** A device bound to lock-1, set up and online. */
export const sampleDevice = (over: Partial<DeviceStatus> = {}): DeviceStatus => ({
  deviceId: 'dev-1',
  provisioned: true,
  connected: true,
  lastSeen: Math.floor(Date.now() / 1000) - 3,
  firmware: 'latchkey-device 1.0.0',
  locked: true,
  codeExpiresAt: null,
  ...over,
});

/** What a lock says of its device (lockSchema.device), from the device's status. */
export const deviceSummary = ({ deviceId, provisioned, connected, lastSeen, firmware }: DeviceStatus): LockDeviceSummary => ({
  deviceId,
  provisioned,
  connected,
  lastSeen,
  firmware,
});

export const sampleShare = (over: Partial<LockShare> = {}): LockShare => ({
  userId: '00000000-0000-4000-8000-000000000001',
  email: 'guest@example.com',
  displayName: null,
  status: 'pending',
  role: 'USER',
  start: null,
  end: null,
  timeWindow: null,
  inviteExpiresAt: null,
  createdAt: 1_700_000_000,
  ...over,
});

export const sampleEntry = (over: Partial<LockLogEntry> = {}): LockLogEntry => ({
  id: 'entry-1',
  lockId: 'lock-1',
  timestamp: Date.now() / 1000,
  type: 'UNLOCK',
  actor: { userId: 'u1', email: 'dev@example.com', displayName: 'Dev' },
  subject: null,
  rejected: false,
  reason: null,
  method: null,
  accessCodeId: null,
  source: 'platform',
  offline: false,
  value: null,
  ...over,
});

/**
 * A text/event-stream response the test writes events into, as the API's live events route would; it stays
 * open until the test ends.
 */
export function eventStream() {
  const { body, controller } = openStream();
  return {
    response: new Response(body, { headers: { 'Content-Type': 'text/event-stream' } }),
    push: (event: 'lock' | 'activity', data: unknown) =>
      controller.enqueue(new TextEncoder().encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)),
    comment: () => controller.enqueue(new TextEncoder().encode(': keep-alive\n\n')),
  };
}
