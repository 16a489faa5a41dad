import * as z from 'zod/mini';

/**
 * GET /api/platform/setup (signed in): what the portal shows where it hands a URL to another machine — a
 * lock's controller, a phone scanning a tile. `publicUrl` is PUBLIC_URL; when it (or the broker URL devices
 * are given) is a loopback address, no other machine can reach it, and the portal says so with the
 * addresses this machine has on its networks, for PUBLIC_URL.
 */
export const platformSetupSchema = z.object({
  publicUrl: z.string(),
  /** PUBLIC_URL names this machine only (localhost, 127.0.0.0/8, ::1). */
  publicUrlIsLoopback: z.boolean(),
  /** The MQTT broker URL devices are given at provisioning (MQTT_PUBLIC_URL, or PUBLIC_URL's host). */
  brokerUrl: z.string(),
  brokerUrlIsLoopback: z.boolean(),
  /** This machine's non-loopback addresses (IPv4 first), as candidates for PUBLIC_URL's host; empty unless a URL above is loopback. */
  networkAddresses: z.array(z.string()),
  /** The device package the service serves for `npm install -g`; null when the service was not built. */
  devicePackage: z.nullable(z.object({ url: z.string(), version: z.string() })),
});
export type PlatformSetup = z.infer<typeof platformSetupSchema>;

/** The URL a lock's controller installs the device package from, under this portal's PUBLIC_URL. */
export const DEVICE_PACKAGE_PATH = '/downloads/latchkey-device.tgz';

/** GET /downloads/latchkey-device.tgz before the service was built: what to run. */
export const DEVICE_PACKAGE_NOT_BUILT = 'The device package is made by the build: run `npm run build` (or `scripts/latchkey start`)';
