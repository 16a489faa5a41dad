import { deviceResultSchema, type DeviceResult } from '@latchkey/contract';
import type { StateDir } from './state-dir.js';

/** Outcomes kept for the platform while it is away; past this the oldest are dropped. */
export const MAX_PENDING_RESULTS = 200;

/**
 * Outcomes decided while the platform could not be told (the local endpoint or `execute` offline), kept on
 * disk until the agent is connected and has published them on `…/result`, so a restart loses none.
 */
export async function readPendingResults(state: StateDir): Promise<DeviceResult[]> {
  const text = await state.read('results');
  if (!text) return [];
  try {
    const list: unknown = JSON.parse(text);
    return Array.isArray(list) ? list.flatMap((item) => { const parsed = deviceResultSchema.safeParse(item); return parsed.success ? [parsed.data] : []; }) : [];
  } catch {
    return [];
  }
}

export async function writePendingResults(state: StateDir, results: readonly DeviceResult[]): Promise<void> {
  if (results.length === 0) return state.remove('results');
  await state.write('results', JSON.stringify(results.slice(-MAX_PENDING_RESULTS)), 0o600);
}
