import {
  deviceCreatedSchema,
  deviceStatusSchema,
  type DeviceCreated,
  type DeviceStatus,
  type Lock,
} from '@latchkey/contract';
import { useMutation, useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { ApiError, request } from '../../../lib/http';
import { lockKeys, lockPath } from '../api';

/** A lock's device sits beside its shares and log, under the application's key. */
export const deviceKeys = {
  status: (appId: string, lockId: string) => ['applications', appId, 'locks', 'device', lockId] as const,
};

const devicePath = (appId: string, lockId: string) => `${lockPath(appId, lockId)}/device`;

/** While a device is not online yet, its status is read again this often (live events usually come first). */
export const DEVICE_POLL_MS = 10_000;

/** The lock's device, or null when it has none (a sandbox lock: the API answers 404). */
export async function getDeviceStatus(appId: string, lockId: string): Promise<DeviceStatus | null> {
  try {
    const res = await request(devicePath(appId, lockId));
    return deviceStatusSchema.parse(await res.json());
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return null;
    throw e;
  }
}

/** Makes a provisioning code for a new device; a device already bound to the lock is replaced. */
export async function createDevice(appId: string, lockId: string): Promise<DeviceCreated> {
  const res = await request(devicePath(appId, lockId), { method: 'POST' });
  return deviceCreatedSchema.parse(await res.json());
}

/** Unbinds the device: it is cut off and the lock is a sandbox lock again. */
export async function deleteDevice(appId: string, lockId: string): Promise<void> {
  await request(devicePath(appId, lockId), { method: 'DELETE' });
}

/** What the lock already says of its device, until the device's own status is in. */
function fromLock(lock: Lock | undefined): DeviceStatus | null | undefined {
  if (!lock || lock.device === undefined) return undefined;
  if (lock.device === null) return null;
  return { ...lock.device, locked: lock.state.locked, codeExpiresAt: null };
}

/**
 * The device's status. Read again every few seconds while a device is bound but not online (waiting for
 * its code to be used, or for it to connect), so it comes online on the page without a reload. Not read
 * for a lock that says it has no device (a sandbox lock): the API would answer 404, a console error on
 * every visit; once the lock has one (a code was made), it is read.
 */
export function useDeviceStatus(appId: string, lockId: string, lock?: Pick<Lock, 'device'>) {
  const queryClient = useQueryClient();
  const virtual = lock?.device === null;
  return useQuery({
    queryKey: deviceKeys.status(appId, lockId),
    queryFn: () => getDeviceStatus(appId, lockId),
    enabled: !virtual,
    placeholderData: () => fromLock(queryClient.getQueryData<Lock>(lockKeys.detail(appId, lockId))),
    refetchInterval: (query) => {
      const status = query.state.data;
      return status && !status.connected ? DEVICE_POLL_MS : false;
    },
  });
}

/** The device changed (made, bound, unbound): its status and the lock's summary of it are read again. */
function refreshDevice(queryClient: QueryClient, appId: string, lockId: string) {
  return Promise.all([
    queryClient.invalidateQueries({ queryKey: deviceKeys.status(appId, lockId) }),
    queryClient.invalidateQueries({ queryKey: lockKeys.detail(appId, lockId) }),
    queryClient.invalidateQueries({ queryKey: lockKeys.list(appId) }),
  ]);
}

export function useCreateDevice(appId: string, lockId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => createDevice(appId, lockId),
    onSuccess: () => refreshDevice(queryClient, appId, lockId),
  });
}

export function useUnbindDevice(appId: string, lockId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => deleteDevice(appId, lockId),
    onSuccess: () => {
      queryClient.setQueryData(deviceKeys.status(appId, lockId), null);
      return refreshDevice(queryClient, appId, lockId);
    },
  });
}

/** A live event about a lock: its device may have come online, gone offline or reported a new state. */
export function refreshDeviceStatus(queryClient: QueryClient, appId: string, lockId: string) {
  return queryClient.invalidateQueries({ queryKey: deviceKeys.status(appId, lockId) });
}
