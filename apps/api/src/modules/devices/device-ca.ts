import { createPublicKey, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import { DEVICE_CERTIFICATE_DAYS, deviceErrors } from '@latchkey/contract';
import type { Db } from '../../db/client.js';
import { badRequest } from '../../errors.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { loadOrCreateSharedSecret } from '../../lib/server-secrets.js';
import { BACKDATE_MS, DAY_MS, createSelfSignedCa, serialNumber, x509, type StoredCa } from '../../lib/x509-ca.js';
import { normaliseSerial, type TlsMaterial } from '../../plugins/mqtt/authority.js';

/** ECDSA P-256: the key every MQTT broker and TLS stack (Mosquitto, OpenSSL, mbedTLS) accepts for a CA. */
const P256 = { name: 'ECDSA', namedCurve: 'P-256' };
const SIGNING = { name: 'ECDSA', hash: 'SHA-256' };
const SECRET_NAME = 'device-ca';
const CA_NAME = 'CN=Latchkey Device CA, O=Latchkey';
/** The subject the service presents to an external broker (its ACL names it). */
export const SERVICE_CN = 'latchkey-service';
/** The broker's and the service's own certificates: made at start-up, so a year outlives any process. */
const OWN_CERTIFICATE_DAYS = 365;
/** An external broker fetches the CRL again after this long. */
const CRL_NEXT_UPDATE_MS = DAY_MS;

/** X.520 serialNumber, the subject attribute a device certificate repeats its own serial in. */
export const SUBJECT_SERIAL_OID = '2.5.4.5';

/**
 * A device certificate's subject: its CN is the device id, and its serialNumber attribute the certificate's
 * serial (normalised hex). A broker that hands the platform the subject alone (RabbitMQ's and EMQX's HTTP
 * authentication, which see no serial) then names the certificate, not only the device: RabbitMQ and EMQX
 * write it `SERIALNUMBER=<serial>,CN=<deviceId>`.
 */
export function deviceSubject(deviceId: string, serial: string): string {
  return `CN=${deviceId}, ${SUBJECT_SERIAL_OID}=${normaliseSerial(serial)}`;
}

/** A certificate issued to a device: its PEM, serial (normalised hex) and expiry. */
export interface IssuedDeviceCertificate {
  certificate: string;
  serial: string;
  notAfter: Date;
}

/**
 * The device CA: an ECDSA P-256 key and self-signed certificate, created by the first instance to start and
 * kept in the database (lib/server-secrets.ts) like the platform CA, so every instance issues and accepts
 * the same chain. It certifies the keys devices make themselves (`deviceSubject`, client authentication), the
 * embedded broker's server certificate and the service's client certificate, and signs the CRL.
 */
export class DeviceCa {
  readonly certificatePem: string;

  private constructor(
    private readonly signingKey: CryptoKey,
    private readonly ca: x509.X509Certificate,
  ) {
    this.certificatePem = ca.toString('pem');
  }

  /** `box` seals the CA's key in the database (SECRETS_ENCRYPTION_KEY). */
  static async load(db: Db, box: SecretBox): Promise<DeviceCa> {
    const stored = JSON.parse(await loadOrCreateSharedSecret(db, box, SECRET_NAME, createCa)) as StoredCa;
    const signingKey = await webcrypto.subtle.importKey('pkcs8', Buffer.from(stored.privateKey, 'base64'), P256, false, ['sign']);
    return new DeviceCa(signingKey as CryptoKey, new x509.X509Certificate(Buffer.from(stored.certificate, 'base64')));
  }

  /**
   * A client certificate for `deviceId` from the device's own PKCS#10 request: the request must be signed by
   * its own ECDSA P-256 or Ed25519 key, and name no subject or CN=<deviceId> (400 otherwise).
   */
  async issueDeviceCertificate(csrPem: string, deviceId: string, now = Date.now()): Promise<IssuedDeviceCertificate> {
    const csr = await readCsr(csrPem);
    const subject = csr.subjectName.toJSON();
    const named = subject.length === 0 || (subject.length === 1 && Object.keys(subject[0]!).length === 1 && subject[0]!.CN?.length === 1 && subject[0]!.CN[0] === deviceId);
    if (!named) throw badRequest(deviceErrors.csrSubject);
    const notAfter = new Date(now + DEVICE_CERTIFICATE_DAYS * DAY_MS);
    const serial = serialNumber();
    const extensions = [new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true), new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth])];
    const certificate = await this.sign(deviceSubject(deviceId, serial), csr.publicKey, now, notAfter, extensions, serial);
    return { certificate: certificate.toString('pem'), serial: normaliseSerial(certificate.serialNumber), notAfter };
  }

  /** The embedded broker's server certificate for these DNS names and IP addresses, with a fresh P-256 key. */
  async issueServerCertificate(hosts: string[], now = Date.now()): Promise<TlsMaterial> {
    const names = [...new Set(hosts)].map((host) => ({ type: isIP(host) ? ('ip' as const) : ('dns' as const), value: host }));
    return this.withFreshKey(`CN=${hosts[0] ?? 'localhost'}`, now, [
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(names),
    ]);
  }

  /** The service's client certificate (CN=latchkey-service) for an external broker, with a fresh P-256 key. */
  async issueServiceCertificate(now = Date.now()): Promise<TlsMaterial> {
    return this.withFreshKey(`CN=${SERVICE_CN}`, now, [
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth]),
    ]);
  }

  /** The CRL of these revoked serials (PEM), valid for a day. */
  async crl(revoked: { serial: string; revokedAt: Date }[], now = Date.now()): Promise<string> {
    const crl = await x509.X509CrlGenerator.create({
      issuer: this.ca.subject,
      thisUpdate: new Date(now),
      nextUpdate: new Date(now + CRL_NEXT_UPDATE_MS),
      entries: revoked.map((entry) => ({ serialNumber: entry.serial, revocationDate: entry.revokedAt })),
      extensions: [await x509.AuthorityKeyIdentifierExtension.create(this.ca)],
      signingAlgorithm: SIGNING,
      signingKey: this.signingKey,
    });
    // OpenSSL (Mosquitto's crlfile) reads only the label X509 CRL.
    return x509.PemConverter.encode(crl.rawData, 'X509 CRL');
  }

  private async withFreshKey(subject: string, now: number, extensions: x509.Extension[]): Promise<TlsMaterial> {
    const keys = (await webcrypto.subtle.generateKey(P256, true, ['sign', 'verify'])) as CryptoKeyPair;
    const certificate = await this.sign(subject, keys.publicKey, now, new Date(now + OWN_CERTIFICATE_DAYS * DAY_MS), extensions);
    const key = x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY');
    return { key, cert: certificate.toString('pem'), ca: this.certificatePem };
  }

  private sign(subject: string, publicKey: x509.PublicKey | CryptoKey, now: number, notAfter: Date, extensions: x509.Extension[], serial = serialNumber()): Promise<x509.X509Certificate> {
    return x509.X509CertificateGenerator.create({
      serialNumber: serial,
      subject,
      issuer: this.ca.subject,
      notBefore: new Date(now - BACKDATE_MS),
      notAfter,
      publicKey,
      signingKey: this.signingKey,
      signingAlgorithm: SIGNING,
      extensions: [new x509.BasicConstraintsExtension(false, undefined, true), ...extensions],
    });
  }
}

/** A PKCS#10 request for an ECDSA P-256 or Ed25519 key, signed by that key; 400 otherwise. */
async function readCsr(pem: string): Promise<x509.Pkcs10CertificateRequest> {
  let csr: x509.Pkcs10CertificateRequest;
  try {
    csr = new x509.Pkcs10CertificateRequest(pem);
    const key = createPublicKey({ key: Buffer.from(csr.publicKey.rawData), format: 'der', type: 'spki' });
    const supported = key.asymmetricKeyType === 'ed25519' || (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1');
    if (supported && (await csr.verify())) return csr;
  } catch {
    // Not a request this CA can read: answered as invalid below.
  }
  throw badRequest(deviceErrors.csrInvalid);
}

async function createCa(): Promise<string> {
  return JSON.stringify(await createSelfSignedCa({ name: CA_NAME, keyAlgorithm: P256, signingAlgorithm: SIGNING, subjectKeyIdentifier: true }));
}
