import { useQuery } from '@tanstack/react-query';
import { getAccount } from './api';

export const accountKey = ['account'] as const;

/** GET /account: display name, email and whether it is verified. */
export const accountQuery = { queryKey: accountKey, queryFn: getAccount, staleTime: 60_000 };

export function useAccount() {
  return useQuery(accountQuery);
}
