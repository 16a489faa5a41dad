import { lockLogEntrySchema, lockSchema, type LockShare } from '@latchkey/contract';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { request } from '../../lib/http';
import { lockKeys, locksPath, storeLock } from './api';
import { refreshDeviceStatus } from './device/api';
import { prependLogEntry } from './log-api';
import { backoffMs, createSseParser, type SseMessage } from './sse';

export type LiveStatus = 'connecting' | 'live' | 'reconnecting';

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/** The lock an event is about: a `lock` event is the lock itself, the others name it as `lockId`. */
function lockIdOf(event: string, body: unknown): string | null {
  if (!body || typeof body !== 'object') return null;
  const id = event === 'lock' ? (body as { id?: unknown }).id : (body as { lockId?: unknown }).lockId;
  return typeof id === 'string' ? id : null;
}

/**
 * Follows the application's lock events while mounted and writes them into the query cache: `lock` events
 * replace that lock, `activity` events go on top of its log (and reload its shares after a share or a
 * revoke). EventSource cannot send the bearer token, so this reads the stream with fetch; when the stream
 * ends or fails it reconnects with back-off and reloads the locks, since events may have been missed.
 */
export function useLockEvents(appId: string): LiveStatus {
  const queryClient = useQueryClient();
  const [status, setStatus] = useState<LiveStatus>('connecting');

  useEffect(() => {
    const controller = new AbortController();
    const { signal } = controller;
    const onMessage = ({ event, data }: SseMessage) => {
      try {
        // Whatever an event says about a lock may be its device's doing (online, offline, a new state, an
        // outcome it reported): the device's status is read again, where a page shows it.
        const about = lockIdOf(event, JSON.parse(data));
        if (about) void refreshDeviceStatus(queryClient, appId, about);
        if (event === 'lock') storeLock(queryClient, lockSchema.parse(JSON.parse(data)));
        if (event === 'activity') {
          const entry = lockLogEntrySchema.parse(JSON.parse(data));
          prependLogEntry(queryClient, appId, entry);
          // A share changed, or an invited user acted for the first time (their share is active now).
          const shares = queryClient.getQueryData<LockShare[]>(lockKeys.shares(appId, entry.lockId));
          const invitedActed =
            shares?.some((s) => s.status === 'pending' && s.userId === entry.actor.userId) ?? false;
          if (entry.type === 'SHARE' || entry.type === 'REVOKE' || invitedActed)
            void queryClient.invalidateQueries({ queryKey: lockKeys.shares(appId, entry.lockId) });
          if (entry.type === 'SETTINGS')
            void queryClient.invalidateQueries({ queryKey: lockKeys.detail(appId, entry.lockId) });
        }
      } catch (e) {
        // An event this portal does not understand is skipped; the stream goes on.
        console.warn('Skipped a lock event', e);
      }
    };

    void (async () => {
      let failures = 0;
      let connectedBefore = false;
      while (!signal.aborted) {
        try {
          const res = await request(`${locksPath(appId)}/events`, { accept: 'text/event-stream', signal });
          if (!res.body) throw new Error('The event stream has no body');
          setStatus('live');
          failures = 0;
          if (connectedBefore) void queryClient.invalidateQueries({ queryKey: lockKeys.all(appId) });
          connectedBefore = true;
          const parse = createSseParser(onMessage);
          const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            parse(value);
          }
        } catch {
          // Network failure, 5xx, or the page going away: the loop decides below.
        }
        if (signal.aborted) break;
        setStatus('reconnecting');
        await sleep(backoffMs(failures++), signal);
      }
    })();
    return () => controller.abort();
  }, [appId, queryClient]);

  return status;
}
