import { useQuery } from '@tanstack/react-query';
import { getAccount } from './api';

export const accountKey = ['account'] as const;

/** GET /account: display name, email and whether it is verified. */
export function useAccount() {
  return useQuery({ queryKey: accountKey, queryFn: getAccount, staleTime: 60_000 });
}
