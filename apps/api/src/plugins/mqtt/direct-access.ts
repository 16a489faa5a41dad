import { BlockList, isIP } from 'node:net';

/**
 * Which direct-access endpoints a device may announce. Users' SDKs post their signed operations to every
 * endpoint a lock lists, so an endpoint must be on the network the door is on: an IP address on a private
 * network (IPv4 10/8, 172.16/12, 192.168/16, link-local 169.254/16 but not the cloud metadata address;
 * IPv6 unique-local fc00::/7 and link-local fe80::/10), or the address the device itself connects from.
 * A host name, a public address, loopback and a URL carrying a user name or password are refused.
 */
const privateNetworks = new BlockList();
privateNetworks.addSubnet('10.0.0.0', 8, 'ipv4');
privateNetworks.addSubnet('172.16.0.0', 12, 'ipv4');
privateNetworks.addSubnet('192.168.0.0', 16, 'ipv4');
privateNetworks.addSubnet('169.254.0.0', 16, 'ipv4');
privateNetworks.addSubnet('fc00::', 7, 'ipv6');
privateNetworks.addSubnet('fe80::', 10, 'ipv6');
const METADATA_ADDRESS = '169.254.169.254';

/** An address as compared: IPv4-mapped IPv6 (`::ffff:a.b.c.d`) as its IPv4 address, IPv6 in lower case. */
export function normaliseAddress(address: string): string {
  const bare = address.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(bare);
  if (dotted) return dotted[1]!;
  // A URL writes a mapped address in hex: [::ffff:c0a8:114] is 192.168.1.20.
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(bare);
  if (!hex) return bare;
  const [high, low] = [parseInt(hex[1]!, 16), parseInt(hex[2]!, 16)];
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** True when `url` may be listed as a direct-access endpoint of a device connected from `ownAddress` (null: unknown). */
export function isAllowedDirectAccessEndpoint(url: string, ownAddress: string | null): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if ((parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.username || parsed.password) return false;
  const host = normaliseAddress(parsed.hostname);
  const family = isIP(host);
  if (family === 0) return false;
  if (ownAddress !== null && host === normaliseAddress(ownAddress)) return true;
  return host !== METADATA_ADDRESS && privateNetworks.check(host, family === 4 ? 'ipv4' : 'ipv6');
}

/** The endpoints of `urls` a device connected from `ownAddress` may announce, in their order. */
export function allowedDirectAccessEndpoints(urls: readonly string[], ownAddress: string | null): string[] {
  return urls.filter((url) => isAllowedDirectAccessEndpoint(url, ownAddress));
}
