import { createHmac, randomBytes } from 'node:crypto';
import type { Db } from '../../db/client.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { loadOrCreateSharedSecret } from '../../lib/server-secrets.js';

/** The server secret every virtual lock's offline-code secret is derived from (server_secrets, sealed). */
const VIRTUAL_OFFLINE_SECRET = 'virtual-offline-codes';

/** A device's own offline-code secret: 32 random bytes, base64url, handed to it once at provisioning. */
export const newOfflineCodeSecret = (): string => randomBytes(32).toString('base64url');

/**
 * The offline-code secret of a virtual (sandbox) lock: HMAC-SHA256(server secret, "offline-code:" + lockId),
 * base64url. The same on every instance (the server secret is shared through the database), never stored
 * per lock, never shown. A device-backed lock's secret is its device's own (lock_devices.offline_code_secret).
 */
export class VirtualOfflineSecrets {
  #key: Promise<Buffer> | null = null;

  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
  ) {}

  async of(lockId: string): Promise<string> {
    return createHmac('sha256', await this.key()).update(`offline-code:${lockId}`, 'utf8').digest('base64url');
  }

  private key(): Promise<Buffer> {
    this.#key ??= loadOrCreateSharedSecret(this.db, this.box, VIRTUAL_OFFLINE_SECRET, newOfflineCodeSecret).then(
      (secret) => Buffer.from(secret, 'base64url'),
      (error: unknown) => {
        // Asked again next time: a database out of reach once must not disable offline codes for good.
        this.#key = null;
        throw error;
      },
    );
    return this.#key;
  }
}
