import { lockSchema, lockTileSchema, type Lock, type LockTile } from '@latchkey/contract';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import * as z from 'zod/mini';
import { request } from '../../../lib/http';
import { lockPath } from '../api';

/** A lock's tiles sit beside its shares and log, under the application's key. */
export const tileKeys = {
  list: (appId: string, lockId: string) => ['applications', appId, 'locks', 'tiles', lockId] as const,
  qr: (appId: string, lockId: string, tileId: string) =>
    ['applications', appId, 'locks', 'tiles', lockId, 'qr', tileId] as const,
  page: (tileId: string) => ['tile', tileId] as const,
};

const tilesPath = (appId: string, lockId: string) => `${lockPath(appId, lockId)}/tile`;

export async function listLockTiles(appId: string, lockId: string): Promise<LockTile[]> {
  const res = await request(tilesPath(appId, lockId));
  return z.array(lockTileSchema).parse(await res.json());
}

export async function createLockTile(appId: string, lockId: string): Promise<LockTile> {
  const res = await request(tilesPath(appId, lockId), { method: 'POST' });
  return lockTileSchema.parse(await res.json());
}

export async function deleteLockTile(appId: string, lockId: string, tileId: string): Promise<void> {
  await request(`${tilesPath(appId, lockId)}/${encodeURIComponent(tileId)}`, { method: 'DELETE' });
}

/** The printable QR code, drawn by the server (the portal bundles no QR library): SVG text. */
export async function getTileQr(appId: string, lockId: string, tileId: string): Promise<string> {
  const res = await request(`${tilesPath(appId, lockId)}/${encodeURIComponent(tileId)}/qr`);
  return res.text();
}

/** The tile page: the locks behind a tile that the signed-in user may open. */
export async function getTileLocks(tileId: string): Promise<Lock[]> {
  const res = await request(`/tile/${encodeURIComponent(tileId)}/lock`);
  return z.array(lockSchema).parse(await res.json());
}

export function useLockTiles(appId: string, lockId: string) {
  return useQuery({ queryKey: tileKeys.list(appId, lockId), queryFn: () => listLockTiles(appId, lockId) });
}

export function useTileQr(appId: string, lockId: string, tileId: string | null) {
  return useQuery({
    queryKey: tileKeys.qr(appId, lockId, tileId ?? ''),
    queryFn: () => getTileQr(appId, lockId, tileId!),
    enabled: tileId !== null,
    staleTime: Infinity,
  });
}

export function useTileLocks(tileId: string) {
  return useQuery({ queryKey: tileKeys.page(tileId), queryFn: () => getTileLocks(tileId), retry: false });
}

export function useCreateTile(appId: string, lockId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => createLockTile(appId, lockId),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: tileKeys.list(appId, lockId) }),
  });
}

export function useDeleteTile(appId: string, lockId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (tileId: string) => deleteLockTile(appId, lockId, tileId),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: tileKeys.list(appId, lockId) }),
  });
}
