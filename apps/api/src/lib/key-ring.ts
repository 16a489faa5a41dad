import { calculateJwkThumbprint, exportJWK, importJWK, importPKCS8, importSPKI, type CryptoKey, type JWK } from 'jose';
import type { Config } from '../config.js';
import type { Db } from '../db/client.js';
import { SecretBox } from './secret-box.js';
import { ALG, ensureSigningKey, loadSigningKeys, retireExpiredKeys, type StoredKey } from './signing-keys.js';

/** A token naming a kid we do not know makes us re-read the keys at most this often (a rotation elsewhere). */
const UNKNOWN_KID_RELOAD_MS = 1_000;

interface Keys {
  signer: { kid: string; key: CryptoKey };
  verifiers: Map<string, CryptoKey>;
  /** What /.well-known/jwks.json publishes. */
  jwks: JWK[];
  /** The earliest time a previous key stops verifying (when the next load should retire it). */
  nextExpiry: number;
}

/**
 * The keys this instance signs and verifies with. From the database by default: loaded at start and
 * re-read every SIGNING_KEYS_REFRESH_SECONDS, and at once when a token names a kid not yet seen, so a
 * rotation on any instance (or by the CLI) is followed everywhere within seconds, without a restart.
 * From env when JWT_PRIVATE_KEY is set: fixed for the process's life, as the operator manages them.
 */
export class KeyRing {
  private keys: Keys;
  private timer: NodeJS.Timeout | null = null;
  private lastUnknownKidReload = 0;
  private reloading: Promise<void> | null = null;
  /** Private keys imported so far, by kid: a re-read imports only what is new. */
  private readonly imported = new Map<string, CryptoKey>();

  /** The database the keys live in and the box their private parts are sealed with; null for env keys. */
  private constructor(private readonly store: { db: Db; box: SecretBox } | null) {
    this.keys = { signer: null as never, verifiers: new Map(), jwks: [], nextExpiry: Infinity };
  }

  static async create(config: Config, db: Db): Promise<KeyRing> {
    if (config.jwt.privateKey) {
      const ring = new KeyRing(null);
      ring.keys = await keysFromEnv(config.jwt.privateKey, config.jwt.previousPublicKeys);
      return ring;
    }
    const box = new SecretBox(config.secretsEncryptionKey);
    await ensureSigningKey(db, box, config.dataDir);
    const ring = new KeyRing({ db, box });
    await ring.reload();
    ring.timer = setInterval(() => void ring.reload().catch(() => {}), config.jwt.keysRefreshSeconds * 1000);
    ring.timer.unref();
    return ring;
  }

  /** Where the keys come from: `database` (rotated with the CLI) or `env` (JWT_PRIVATE_KEY). */
  get source(): 'database' | 'env' {
    return this.store ? 'database' : 'env';
  }

  signer(): { kid: string; key: CryptoKey } {
    return this.keys.signer;
  }

  jwks(): JWK[] {
    return this.keys.jwks;
  }

  /** The key of `kid`, re-reading the database once if it is new to us; throws when there is none. */
  async verifyKey(kid: string | undefined): Promise<CryptoKey> {
    if (!kid) throw new Error('token without kid');
    const known = this.keys.verifiers.get(kid);
    if (known) return known;
    // Throttled: tokens with made-up kids must not turn into one database read each.
    if (this.store && Date.now() - this.lastUnknownKidReload >= UNKNOWN_KID_RELOAD_MS) {
      this.lastUnknownKidReload = Date.now();
      await this.reload();
    }
    const found = this.keys.verifiers.get(kid);
    if (!found) throw new Error('unknown signing key');
    return found;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** One re-read at a time; callers arriving meanwhile wait for it. */
  reload(): Promise<void> {
    this.reloading ??= this.load().finally(() => {
      this.reloading = null;
    });
    return this.reloading;
  }

  private async load(): Promise<void> {
    const { db, box } = this.store!;
    if (this.keys.nextExpiry <= Date.now()) await retireExpiredKeys(db);
    const rows = await loadSigningKeys(db, box);
    const active = rows.find((r) => r.status === 'active');
    if (!active?.privatePem) throw new Error('No active signing key in the database');
    let signerKey = this.imported.get(active.kid);
    if (!signerKey) {
      signerKey = await importPKCS8(active.privatePem, ALG);
      this.imported.set(active.kid, signerKey);
    }
    const verifiers = new Map<string, CryptoKey>();
    for (const row of rows) verifiers.set(row.kid, this.keys.verifiers.get(row.kid) ?? ((await importJWK({ ...row.publicJwk, alg: ALG }, ALG)) as CryptoKey));
    this.keys = {
      signer: { kid: active.kid, key: signerKey },
      verifiers,
      jwks: rows.map(publicJwkOf),
      nextExpiry: Math.min(...rows.map((r) => r.verifyUntil?.getTime() ?? Infinity)),
    };
  }
}

const publicJwkOf = (row: Pick<StoredKey, 'kid' | 'publicJwk'>): JWK => ({ ...row.publicJwk, kid: row.kid, alg: ALG, use: 'sig' });

async function keysFromEnv(privatePem: string, previousPublicPems: string | undefined): Promise<Keys> {
  const signing = await importPKCS8(privatePem.replace(/\\n/g, '\n'), ALG, { extractable: true });
  const all = [signing, ...(await Promise.all(splitPems(previousPublicPems).map((pem) => importSPKI(pem, ALG, { extractable: true }))))];
  const verifiers = new Map<string, CryptoKey>();
  const jwks: JWK[] = [];
  for (const key of all) {
    const { kty, crv, x } = await exportJWK(key);
    const publicJwk = { kty: kty!, crv: crv!, x: x! };
    const kid = await calculateJwkThumbprint(publicJwk);
    verifiers.set(kid, key === signing ? ((await importJWK({ ...publicJwk, alg: ALG }, ALG)) as CryptoKey) : key);
    jwks.push(publicJwkOf({ kid, publicJwk }));
  }
  return { signer: { kid: jwks[0]!.kid!, key: signing }, verifiers, jwks, nextExpiry: Infinity };
}

function splitPems(value: string | undefined): string[] {
  if (!value) return [];
  return (value.replace(/\\n/g, '\n').match(/-----BEGIN PUBLIC KEY-----[\s\S]+?-----END PUBLIC KEY-----/g) ?? []).map((s) => s.trim());
}
