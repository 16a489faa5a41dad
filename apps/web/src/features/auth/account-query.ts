import { useQuery } from '@tanstack/react-query';
import { getAccount } from './api';

export const accountKey = ['account'] as const;

/** GET /account: display name, email and whether it is verified (issue 29). */
export function useAccount() {
  return useQuery({ queryKey: accountKey, queryFn: getAccount, staleTime: 60_000 });
}
