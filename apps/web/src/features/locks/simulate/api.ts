import { keypadResultSchema, type KeypadResult, type SimulatedEvent } from '@latchkey/contract';
import { useMutation } from '@tanstack/react-query';
import { request } from '../../../lib/http';
import { lockPath } from '../api';


const simulatePath = (appId: string, lockId: string, what: string) => `${lockPath(appId, lockId)}/simulate/${what}`;

/** A code typed at the virtual lock's keypad, checked as a door checks it. */
export async function simulateKeypad(appId: string, lockId: string, code: string): Promise<KeypadResult> {
  const res = await request(simulatePath(appId, lockId, 'keypad'), { method: 'POST', body: { code } });
  return keypadResultSchema.parse(await res.json());
}

/** The virtual lock reports `event` (battery: with its level, 0–100). The lock and its log follow live. */
export async function simulateEvent(appId: string, lockId: string, event: SimulatedEvent, value?: number): Promise<void> {
  await request(simulatePath(appId, lockId, event), {
    method: 'POST',
    ...(event === 'battery' ? { body: { value } } : {}),
  });
}

export function useSimulateKeypad(appId: string, lockId: string) {
  return useMutation({ mutationFn: (code: string) => simulateKeypad(appId, lockId, code) });
}

export function useSimulateEvent(appId: string, lockId: string) {
  return useMutation({
    mutationFn: ({ event, value }: { event: SimulatedEvent; value?: number }) => simulateEvent(appId, lockId, event, value),
  });
}
