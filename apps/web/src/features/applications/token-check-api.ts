import { tokenCheckReportSchema, type TokenCheckReport } from '@latchkey/contract';
import { useMutation } from '@tanstack/react-query';
import { request } from '../../lib/http';

const tokenCheckPath = (id: string) => `/platform/application/${encodeURIComponent(id)}/auth/token-check`;

/** Runs every check the platform applies to an application-signed user token; nothing is stored. */
export async function checkToken(id: string, token: string): Promise<TokenCheckReport> {
  const res = await request(tokenCheckPath(id), { method: 'POST', body: { token } });
  return tokenCheckReportSchema.parse(await res.json());
}

/** A mutation, not a query: each press of "Check token" is one explicit run, never cached or retried. */
export function useTokenCheck(id: string) {
  return useMutation({ mutationFn: (token: string) => checkToken(id, token) });
}
