// @peculiar/x509 describes ASN.1 with decorators that read their metadata at import time.
import 'reflect-metadata';
import { randomBytes, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

export { x509 };

export const DAY_MS = 86_400_000;
/** Certificates start a minute in the past, so a device whose clock is a little behind can use one at once. */
export const BACKDATE_MS = 60_000;
/** A CA outlives any certificate it issues: its own certificate is made for twenty years. */
const CA_LIFETIME_MS = 20 * 365 * DAY_MS;

/** A CA as the database keeps it (server secrets). */
export interface StoredCa {
  /** PKCS#8 DER, base64. */
  privateKey: string;
  /** The self-signed CA certificate, DER base64. */
  certificate: string;
}

/** Positive, random and without a leading zero byte: RFC 5280 serials are unique per CA. */
export function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = 0x10 + (bytes[0]! % 0x70);
  return bytes.toString('hex');
}

/**
 * A new self-signed CA (the platform's for users' keys, the device CA for MQTT): its key pair and its
 * certificate, which may sign certificates and CRLs but no CA below it. Answers what the database keeps.
 */
export async function createSelfSignedCa(options: {
  name: string;
  keyAlgorithm: EcKeyGenParams | Algorithm;
  signingAlgorithm: EcdsaParams | Algorithm;
  /** Adds the subject key identifier (brokers and TLS stacks look certificates up by it). */
  subjectKeyIdentifier?: boolean;
}): Promise<StoredCa> {
  const keys = (await webcrypto.subtle.generateKey(options.keyAlgorithm, true, ['sign', 'verify'])) as CryptoKeyPair;
  const now = Date.now();
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: options.name,
    notBefore: new Date(now - BACKDATE_MS),
    notAfter: new Date(now + CA_LIFETIME_MS),
    keys,
    signingAlgorithm: options.signingAlgorithm,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      ...(options.subjectKeyIdentifier ? [await x509.SubjectKeyIdentifierExtension.create(keys.publicKey)] : []),
    ],
  });
  const privateKey = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  return { privateKey: privateKey.toString('base64'), certificate: Buffer.from(certificate.rawData).toString('base64') };
}
