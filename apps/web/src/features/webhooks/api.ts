import {
  nextDeliveryCursor,
  webhookDeliverySchema,
  webhookSchema,
  webhookWithSecretSchema,
  type CreateWebhook,
  type Webhook,
  type WebhookDelivery,
  type WebhookWithSecret,
} from '@latchkey/contract';
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import * as z from 'zod/mini';
import { request } from '../../lib/http';

/** Under the application's key, so its history (which records these changes) refreshes with them. */
export const webhookKeys = {
  list: (appId: string) => ['applications', appId, 'webhooks'] as const,
  deliveries: (appId: string, webhookId: string) => ['applications', appId, 'webhooks', webhookId, 'deliveries'] as const,
};

const webhookPath = (appId: string) => `/platform/application/${encodeURIComponent(appId)}/webhook`;
const onePath = (appId: string, webhookId: string) => `${webhookPath(appId)}/${encodeURIComponent(webhookId)}`;

export async function listWebhooks(appId: string): Promise<Webhook[]> {
  return z.array(webhookSchema).parse(await (await request(webhookPath(appId))).json());
}
export async function createWebhook(appId: string, input: CreateWebhook): Promise<WebhookWithSecret> {
  return webhookWithSecretSchema.parse(await (await request(webhookPath(appId), { method: 'POST', body: input })).json());
}
export async function rotateWebhookSecret(appId: string, webhookId: string): Promise<WebhookWithSecret> {
  return webhookWithSecretSchema.parse(await (await request(`${onePath(appId, webhookId)}/rotate`, { method: 'POST' })).json());
}
export async function deleteWebhook(appId: string, webhookId: string): Promise<void> {
  await request(onePath(appId, webhookId), { method: 'DELETE' });
}
/** A page of the delivery log, newest first; `nextCursor` comes from the answer's Link rel="next". */
export async function listDeliveries(appId: string, webhookId: string, cursor?: string): Promise<{ items: WebhookDelivery[]; nextCursor: string | null }> {
  const res = await request(`${onePath(appId, webhookId)}/delivery${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`);
  return { items: z.array(webhookDeliverySchema).parse(await res.json()), nextCursor: nextDeliveryCursor(res.headers.get('link')) };
}
/** A signed webhook.test delivery to this endpoint, queued like any other; answers the delivery. */
export async function sendTestEvent(appId: string, webhookId: string): Promise<WebhookDelivery> {
  return webhookDeliverySchema.parse(await (await request(`${onePath(appId, webhookId)}/test`, { method: 'POST' })).json());
}
export async function resendDelivery(appId: string, webhookId: string, deliveryId: string): Promise<void> {
  await request(`${onePath(appId, webhookId)}/delivery/${encodeURIComponent(deliveryId)}/resend`, { method: 'POST' });
}

export function useWebhooks(appId: string) {
  return useQuery({ queryKey: webhookKeys.list(appId), queryFn: () => listWebhooks(appId) });
}

/**
 * Deliveries change on their own (retries, a receiver coming back): looked at again every few seconds,
 * the pages loaded so far each from the cursor of the one before it as fetched again (TanStack Query
 * refetches an infinite query's pages in order), so none overlap.
 */
export function useDeliveries(appId: string, webhookId: string | null) {
  return useInfiniteQuery({
    queryKey: webhookKeys.deliveries(appId, webhookId ?? ''),
    queryFn: ({ pageParam }) => listDeliveries(appId, webhookId ?? '', pageParam),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
    enabled: webhookId !== null,
    refetchInterval: 5_000,
  });
}

function useInvalidate(appId: string) {
  const queryClient = useQueryClient();
  // The application's key: its webhooks, their deliveries and its history.
  return () => queryClient.invalidateQueries({ queryKey: ['applications', appId] });
}

export function useCreateWebhook(appId: string) {
  const invalidate = useInvalidate(appId);
  return useMutation({ mutationFn: (input: CreateWebhook) => createWebhook(appId, input), onSuccess: invalidate });
}
export function useRotateWebhookSecret(appId: string) {
  const invalidate = useInvalidate(appId);
  return useMutation({ mutationFn: (webhookId: string) => rotateWebhookSecret(appId, webhookId), onSuccess: invalidate });
}
export function useDeleteWebhook(appId: string) {
  const invalidate = useInvalidate(appId);
  return useMutation({ mutationFn: (webhookId: string) => deleteWebhook(appId, webhookId), onSuccess: invalidate });
}
export function useSendTestEvent(appId: string, webhookId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => sendTestEvent(appId, webhookId),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: webhookKeys.deliveries(appId, webhookId) }),
  });
}
export function useResendDelivery(appId: string, webhookId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (deliveryId: string) => resendDelivery(appId, webhookId, deliveryId),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: webhookKeys.deliveries(appId, webhookId) }),
  });
}
