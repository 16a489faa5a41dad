import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const PREFIX = 'enc:v1:';

/**
 * Seals the private parts kept in the database (signing keys, server secrets) with AES-256-GCM under
 * SECRETS_ENCRYPTION_KEY. Without a key, values are kept as they are (the service warns at start); a
 * sealed value read without the key is an error, never a silent fallback.
 */
export class SecretBox {
  readonly #key: Buffer | null;

  constructor(secret: string | undefined) {
    // Any string of 32+ characters: hashed to the 256-bit AES key, so operators need not produce raw bytes.
    this.#key = secret ? createHash('sha256').update(secret, 'utf8').digest() : null;
  }

  get encrypts(): boolean {
    return this.#key !== null;
  }

  seal(plain: string): string {
    if (!this.#key) return plain;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${PREFIX}${[iv, cipher.getAuthTag(), body].map((b) => b.toString('base64url')).join('.')}`;
  }

  /** A sealed value opened, or a value stored before encryption was configured, as it is. */
  open(stored: string): string {
    if (!stored.startsWith(PREFIX)) return stored;
    if (!this.#key) throw new Error('A secret in the database is encrypted, but SECRETS_ENCRYPTION_KEY is not set');
    const [iv, tag, body] = stored.slice(PREFIX.length).split('.').map((p) => Buffer.from(p, 'base64url'));
    if (!iv || !tag || !body) throw new Error('A secret in the database is malformed');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, iv);
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
    } catch {
      throw new Error('A secret in the database cannot be decrypted with this SECRETS_ENCRYPTION_KEY');
    }
  }
}
