/** TLS material in PEM: a certificate chain, its key, and the CA a peer's certificate must chain to. */
export interface TlsMaterial {
  key: string;
  cert: string;
  ca: string;
}

/**
 * What the broker asks of the device CA (modules/devices): whether a certificate is the one a bound device
 * holds now, and the certificates the broker and the service present.
 */
export interface DeviceAuthority {
  /** True when `serial` (hex) is the certificate `deviceId` holds now: bound, provisioned, not revoked. */
  isCurrentCertificate(deviceId: string, serial: string): Promise<boolean>;
  /** The embedded broker's server certificate for these DNS names and IP addresses, with its key and the device CA. */
  brokerTls(hosts: string[]): Promise<TlsMaterial>;
  /** The service's own client certificate (CN=latchkey-service) for an external broker, with its key and the device CA. */
  serviceTls(): Promise<TlsMaterial>;
}

/** A certificate serial as the broker compares it: lower-case hex without leading zeros. */
export const normaliseSerial = (serial: string): string => serial.toLowerCase().replace(/^0+(?=.)/, '');
