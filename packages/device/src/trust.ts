import { X509Certificate, type KeyObject } from 'node:crypto';
import { ed25519KeyProblem, isUuid } from '@latchkey/contract';

/** A certificate the platform CA issued, as read from its DER (validity in epoch ms). */
export interface IssuedLeaf {
  /** The user the leaf certifies (its subject's CN), or null for a leaf that names no user. */
  userId: string | null;
  publicKey: KeyObject;
  notBefore: number;
  notAfter: number;
  /** A small-order or non-canonical Ed25519 point: no one holds its private key, so it is refused. */
  weakKey: boolean;
}

/** Leaves remembered after their chain check; a lock sees few users, the in-process platform many. */
const MAX_CACHED_LEAVES = 10_000;

/**
 * The one thing a lock trusts: the platform CA certificate it received at provisioning. It signs the
 * leaves that certify lock users' Ed25519 keys and the configs the platform sends. Leaves already
 * checked are remembered by their base64 text, so a user's chain is verified once.
 */
export class PlatformTrust {
  readonly certificate: X509Certificate;
  private readonly leaves = new Map<string, IssuedLeaf | null>();

  /** `certificate`: the platform CA as PEM, DER or an X509Certificate. */
  constructor(certificate: string | Buffer | X509Certificate) {
    this.certificate = certificate instanceof X509Certificate ? certificate : new X509Certificate(certificate);
    if (this.certificate.publicKey.asymmetricKeyType !== 'ed25519') throw new Error('The platform CA certificate must hold an Ed25519 key');
  }

  /** True when `der` is the platform CA's own certificate. */
  isCa(der: Buffer): boolean {
    return der.equals(this.certificate.raw);
  }

  /**
   * The leaf if the platform CA signed it and it certifies an Ed25519 key; null otherwise. A user leaf's
   * subject is `CN=<user id>` with the id in lower case, exactly as the CA writes it.
   */
  readLeaf(base64: string): IssuedLeaf | null {
    const cached = this.leaves.get(base64);
    if (cached !== undefined) return cached;
    const leaf = this.parse(Buffer.from(base64, 'base64'));
    if (this.leaves.size >= MAX_CACHED_LEAVES) this.leaves.delete(this.leaves.keys().next().value!);
    this.leaves.set(base64, leaf);
    return leaf;
  }

  private parse(der: Buffer): IssuedLeaf | null {
    let leaf: X509Certificate;
    try {
      leaf = new X509Certificate(der);
    } catch {
      return null;
    }
    if (leaf.issuer !== this.certificate.subject || !leaf.verify(this.certificate.publicKey)) return null;
    if (leaf.publicKey.asymmetricKeyType !== 'ed25519') return null;
    const cn = /^CN=([0-9a-f-]{36})$/m.exec(leaf.subject)?.[1];
    const userId = cn && isUuid(cn) && cn === cn.toLowerCase() ? cn : null;
    return { userId, publicKey: leaf.publicKey, notBefore: Date.parse(leaf.validFrom), notAfter: Date.parse(leaf.validTo), weakKey: isWeak(leaf.publicKey) };
  }
}

export const isWeak = (key: KeyObject) => ed25519KeyProblem(Buffer.from(key.export({ format: 'jwk' }).x!, 'base64url')) !== null;
