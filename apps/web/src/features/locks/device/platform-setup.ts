import { DEVICE_PACKAGE_PATH, platformSetupSchema, type PlatformSetup } from '@latchkey/contract';
import { useQuery } from '@tanstack/react-query';
import { request } from '../../../lib/http';

export const platformSetupKey = ['platform', 'setup'] as const;

/** GET /platform/setup: the URLs handed to other machines, whether they are loopback, and the device package. */
export async function getPlatformSetup(): Promise<PlatformSetup> {
  const res = await request('/platform/setup');
  return platformSetupSchema.parse(await res.json());
}

/** It changes only when the service restarts: read once per page load. */
export function usePlatformSetup() {
  return useQuery({ queryKey: platformSetupKey, queryFn: getPlatformSetup, staleTime: Infinity });
}

/** Where the device package installs from: what the platform says, or this portal's origin until it has. */
export function devicePackageUrl(setup: PlatformSetup | undefined): string {
  return setup?.devicePackage?.url ?? `${setup?.publicUrl ?? window.location.origin}${DEVICE_PACKAGE_PATH}`;
}

/**
 * `PUBLIC_URL=<url> scripts/latchkey start` for each of this machine's network addresses, with PUBLIC_URL's
 * scheme and port: what makes the URLs other machines are given reachable.
 */
export function publicUrlCommands(
  setup: Pick<PlatformSetup, 'publicUrl' | 'networkAddresses'>,
  max = 3,
): string[] {
  const url = new URL(setup.publicUrl);
  const port = url.port ? `:${url.port}` : '';
  return setup.networkAddresses
    .slice(0, max)
    .map(
      (address) =>
        `PUBLIC_URL=${url.protocol}//${address.includes(':') ? `[${address}]` : address}${port} scripts/latchkey start`,
    );
}
