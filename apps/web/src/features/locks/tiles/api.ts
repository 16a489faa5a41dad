import {
  certificateResponseSchema,
  lockSchema,
  lockTileSchema,
  tileBrandingSchema,
  tileSignInResponseSchema,
  tileSignInSentSchema,
  type CertificateResponse,
  type Lock,
  type LockTile,
  type TileBranding,
  type TileSignInResponse,
} from '@latchkey/contract';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import * as z from 'zod/mini';
import { request } from '../../../lib/http';
import { LOCK_PAGE_FRESH_MS, lockPath } from '../api';

/** A lock's tiles sit beside its shares and log, under the application's key. */
export const tileKeys = {
  list: (appId: string, lockId: string) => ['applications', appId, 'locks', 'tiles', lockId] as const,
  qr: (appId: string, lockId: string, tileId: string) =>
    ['applications', appId, 'locks', 'tiles', lockId, 'qr', tileId] as const,
  page: (tileId: string, who: string) => ['tile', tileId, who] as const,
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

export async function renameLockTile(appId: string, lockId: string, tileId: string, name: string | null): Promise<LockTile> {
  const res = await request(`${tilesPath(appId, lockId)}/${encodeURIComponent(tileId)}`, { method: 'PUT', body: { name } });
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

/**
 * The tile page: the locks behind a tile that the user may open — the portal's signed-in user, or (with
 * `bearer`) the person a tile's emailed link signed in.
 */
export async function getTileLocks(tileId: string, bearer?: string): Promise<Lock[]> {
  const res = await request(`/tile/${encodeURIComponent(tileId)}/lock`, { bearer });
  return z.array(lockSchema).parse(await res.json());
}

/** Whose door it is (the application's name, logo and colour): public, for the page at the door. */
export async function getTileBranding(tileId: string): Promise<TileBranding> {
  const res = await request(`/tile/${encodeURIComponent(tileId)}/branding`, { auth: false });
  return tileBrandingSchema.parse(await res.json());
}

/** Asks for a sign-in link by email; the answer says the same whether or not one is sent. */
export async function requestTileSignIn(tileId: string, email: string): Promise<string> {
  const res = await request(`/tile/${encodeURIComponent(tileId)}/sign-in`, { method: 'POST', body: { email }, auth: false });
  return tileSignInSentSchema.parse(await res.json()).message;
}

/** Spends the emailed link's secret for a lock-user token. */
export async function verifyTileSignIn(token: string): Promise<TileSignInResponse> {
  const res = await request('/tile/sign-in/verify', { method: 'POST', body: { token }, auth: false });
  return tileSignInResponseSchema.parse(await res.json());
}

/** A lock-user's key certified with their own token (application users need no emailed code). */
export async function certifyAsTileUser(bearer: string, ephemeralKey: string): Promise<CertificateResponse> {
  const res = await request('/auth/certificate', { method: 'POST', body: { ephemeralKey }, bearer });
  return certificateResponseSchema.parse(await res.json());
}

/** A signed operation sent with the lock-user's token. */
export async function executeAsTileUser(bearer: string, lockId: string, jws: string): Promise<void> {
  await request(`/device/${encodeURIComponent(lockId)}/execute`, { method: 'POST', body: jws, contentType: 'application/jwt', bearer });
}

export function useLockTiles(appId: string, lockId: string) {
  return useQuery({
    queryKey: tileKeys.list(appId, lockId),
    queryFn: () => listLockTiles(appId, lockId),
    staleTime: LOCK_PAGE_FRESH_MS,
  });
}

export function useTileQr(appId: string, lockId: string, tileId: string | null) {
  return useQuery({
    queryKey: tileKeys.qr(appId, lockId, tileId ?? ''),
    queryFn: () => getTileQr(appId, lockId, tileId!),
    enabled: tileId !== null,
    staleTime: Infinity,
  });
}

/** `bearer`: the tile sign-in's token; without it, the portal's session. */
export function useTileLocks(tileId: string, who: { bearer?: string; userId: string } | null) {
  return useQuery({
    queryKey: tileKeys.page(tileId, who?.userId ?? ''),
    queryFn: () => getTileLocks(tileId, who?.bearer),
    enabled: who !== null,
    retry: false,
  });
}

export function useTileBranding(tileId: string) {
  return useQuery({ queryKey: ['tile', tileId, 'branding'], queryFn: () => getTileBranding(tileId), retry: false, staleTime: Infinity });
}

export function useCreateTile(appId: string, lockId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => createLockTile(appId, lockId),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: tileKeys.list(appId, lockId) }),
  });
}

export function useRenameTile(appId: string, lockId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ tileId, name }: { tileId: string; name: string | null }) => renameLockTile(appId, lockId, tileId, name),
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
