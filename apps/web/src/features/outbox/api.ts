import { sentEmailSchema, type SentEmail } from '@latchkey/contract';
import { useQuery } from '@tanstack/react-query';
import * as z from 'zod/mini';
import { request } from '../../lib/http';

/** Under the application's key; an email never changes once sent, so its HTML is kept as long as the page. */
export const outboxKeys = {
  list: (appId: string) => ['applications', appId, 'outbox'] as const,
  html: (appId: string, emailId: string) => ['applications', appId, 'outbox', emailId] as const,
};

const outboxPath = (appId: string) => `/platform/application/${encodeURIComponent(appId)}/outbox`;
const outboxListSchema = z.array(sentEmailSchema);

export async function listOutbox(appId: string): Promise<SentEmail[]> {
  const res = await request(outboxPath(appId));
  return outboxListSchema.parse(await res.json());
}

/** The email as it was rendered and sent; fetched with the bearer token, so a frame cannot load it by URL. */
export async function getOutboxHtml(appId: string, emailId: string): Promise<string> {
  const res = await request(`${outboxPath(appId)}/${encodeURIComponent(emailId)}`, { accept: 'text/html' });
  return res.text();
}

export function useOutbox(appId: string) {
  // The sandbox sends mail as the developer works elsewhere (a share on the lock page): look again on focus.
  return useQuery({
    queryKey: outboxKeys.list(appId),
    queryFn: () => listOutbox(appId),
    refetchOnWindowFocus: 'always',
  });
}

export function useOutboxHtml(appId: string, emailId: string | null) {
  return useQuery({
    queryKey: outboxKeys.html(appId, emailId ?? ''),
    queryFn: () => getOutboxHtml(appId, emailId ?? ''),
    enabled: emailId !== null,
    staleTime: Infinity,
  });
}
