import { X509Certificate, createPrivateKey, createPublicKey, webcrypto, type KeyObject } from 'node:crypto';
import { CERTIFICATE_LIFETIME_DAYS, isUuid } from '@latchkey/contract';
import type { Db } from '../db/client.js';
import type { SecretBox } from '../lib/secret-box.js';
import { loadOrCreateSharedSecret } from '../lib/server-secrets.js';
import { BACKDATE_MS, DAY_MS, createSelfSignedCa, serialNumber, x509, type StoredCa } from '../lib/x509-ca.js';

const ED25519 = { name: 'Ed25519' };
const SECRET_NAME = 'platform-ca';
const CA_NAME = 'CN=Latchkey Sandbox Platform CA, O=Latchkey';

/** The CA writes user ids in lower case: a leaf naming one otherwise is not one it issued. */
const isLowerCaseUuid = (value: string) => isUuid(value) && value === value.toLowerCase();

/** A leaf this CA issued, as read from its DER: whose it is, its key and its validity (epoch ms). */
export interface IssuedLeaf {
  userId: string;
  publicKey: KeyObject;
  notBefore: number;
  notAfter: number;
}

/**
 * The platform CA: an Ed25519 key and self-signed certificate, created by the first instance
 * to start and kept in the database (lib/server-secrets.ts), so every instance issues and accepts the
 * same chain. It certifies the Ed25519 keys lock users sign their operations with.
 */
export class PlatformCa {
  /** Standard base64 DER, the form chains are sent in. */
  readonly certificateBase64: string;
  /** The CA's own public key, its 32 raw bytes in base64url (a JWK's `x`): never certified for a user. */
  readonly publicKeyX: string;
  private readonly caCertificate: X509Certificate;

  private constructor(
    private readonly signingKey: CryptoKey,
    private readonly caX509: x509.X509Certificate,
    certificateDer: Buffer,
  ) {
    this.certificateBase64 = certificateDer.toString('base64');
    this.caCertificate = new X509Certificate(certificateDer);
    this.publicKeyX = ed25519X(this.caCertificate.publicKey);
  }

  static async load(db: Db, box: SecretBox): Promise<PlatformCa> {
    const stored = JSON.parse(await loadOrCreateSharedSecret(db, box, SECRET_NAME, createCa)) as StoredCa;
    const der = Buffer.from(stored.certificate, 'base64');
    const signingKey = await webcrypto.subtle.importKey('pkcs8', Buffer.from(stored.privateKey, 'base64'), ED25519, false, ['sign']);
    return new PlatformCa(signingKey as CryptoKey, new x509.X509Certificate(der), der);
  }

  /**
   * A leaf certifying `publicKey` (Ed25519) for `userId`, about 30 days; the chain, leaf first. Its notBefore
   * (whole seconds, backdated a little for clocks behind ours) is never earlier than `earliest` (epoch ms):
   * the user's certifiedAfter, before which their certificates are refused.
   */
  async issue(userId: string, publicKey: KeyObject, now = Date.now(), earliest: number | null = null): Promise<string[]> {
    const spki = publicKey.export({ format: 'der', type: 'spki' });
    const notBefore = Math.max(Math.floor((now - BACKDATE_MS) / 1000) * 1000, earliest === null ? 0 : Math.ceil(earliest / 1000) * 1000);
    const leaf = await x509.X509CertificateGenerator.create({
      serialNumber: serialNumber(),
      subject: `CN=${userId}, O=Latchkey`,
      issuer: this.caX509.subject,
      notBefore: new Date(notBefore),
      notAfter: new Date(now + CERTIFICATE_LIFETIME_DAYS * DAY_MS),
      publicKey: (await webcrypto.subtle.importKey('spki', spki, ED25519, true, ['verify'])) as CryptoKey,
      signingKey: this.signingKey,
      signingAlgorithm: ED25519,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      ],
    });
    return [Buffer.from(leaf.rawData).toString('base64'), this.certificateBase64];
  }

  /**
   * A compact JWS over `payload` signed with the CA's own key (EdDSA), its header carrying the CA
   * certificate as `x5c` (standard base64 DER): what a device checks a config against, with nothing but
   * the CA it was given at provisioning.
   */
  async signJws(payload: unknown): Promise<string> {
    const header = { alg: 'EdDSA', typ: 'JWT', x5c: [this.certificateBase64] };
    const input = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(payload))}`;
    const signature = Buffer.from(await webcrypto.subtle.sign(ED25519, this.signingKey, Buffer.from(input)));
    return `${input}.${signature.toString('base64url')}`;
  }

  /** True when `der` is this CA's own certificate (the second element of a chain). */
  isCaCertificate(der: Buffer): boolean {
    return der.equals(this.caCertificate.raw);
  }

  /** The leaf if this CA signed it and it certifies an Ed25519 key for a user id; null otherwise. */
  readLeaf(der: Buffer): IssuedLeaf | null {
    let leaf: X509Certificate;
    try {
      leaf = new X509Certificate(der);
    } catch {
      return null;
    }
    if (leaf.issuer !== this.caCertificate.subject || !leaf.verify(this.caCertificate.publicKey)) return null;
    const userId = /^CN=([0-9a-f-]{36})$/m.exec(leaf.subject)?.[1];
    if (!userId || !isLowerCaseUuid(userId) || leaf.publicKey.asymmetricKeyType !== 'ed25519') return null;
    return { userId, publicKey: leaf.publicKey, notBefore: Date.parse(leaf.validFrom), notAfter: Date.parse(leaf.validTo) };
  }
}

const base64url = (text: string) => Buffer.from(text).toString('base64url');

async function createCa(): Promise<string> {
  const stored = await createSelfSignedCa({ name: CA_NAME, keyAlgorithm: ED25519, signingAlgorithm: ED25519 });
  // Checked here so a key Node cannot read back never reaches the database.
  createPrivateKey({ key: Buffer.from(stored.privateKey, 'base64'), format: 'der', type: 'pkcs8' });
  return JSON.stringify(stored);
}

/** An Ed25519 public key's 32 raw bytes in base64url, as a JWK's `x`. */
export const ed25519X = (key: KeyObject): string => key.export({ format: 'jwk' }).x!;

/** Raw 32-byte Ed25519 keys get this DER SPKI prefix (RFC 8410). */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const BASE64 = /^(?:[A-Za-z0-9+/]+={0,2}|[A-Za-z0-9_-]+)$/;

/** An Ed25519 public key from base64 (either alphabet): the raw 32 bytes or DER SPKI. null if it is neither. */
export function readEphemeralKey(text: string): KeyObject | null {
  const trimmed = text.trim();
  if (!BASE64.test(trimmed)) return null;
  const bytes = Buffer.from(trimmed, 'base64');
  const der = bytes.length === 32 ? Buffer.concat([ED25519_SPKI_PREFIX, bytes]) : bytes;
  try {
    const key = createPublicKey({ key: der, format: 'der', type: 'spki' });
    return key.asymmetricKeyType === 'ed25519' ? key : null;
  } catch {
    return null;
  }
}
