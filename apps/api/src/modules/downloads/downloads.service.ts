import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ipaddr from 'ipaddr.js';

/** What the build leaves in dist/downloads (packages/device/pack.mjs): the tarball and its version. */
export const DEVICE_TARBALL = 'latchkey-device.tgz';
const DEVICE_TARBALL_INFO = 'latchkey-device.json';

export interface DevicePackage {
  file: string;
  version: string;
}

/**
 * apps/api/dist/downloads, found from this file wherever it runs: the bundle (dist/chunks/…) or the sources
 * under tsx and the tests (src/modules/downloads/…).
 */
export function findDownloadsDir(from = path.dirname(fileURLToPath(import.meta.url))): string | undefined {
  let dir = from;
  for (let i = 0; i < 5; i++) {
    const candidate = path.join(dir, 'dist', 'downloads');
    if (fs.existsSync(candidate)) return candidate;
    dir = path.dirname(dir);
  }
  return undefined;
}

/** The built device package in `dir`, or null when the service was not built (`npm run build`). */
export function readDevicePackage(dir: string | undefined): DevicePackage | null {
  if (!dir) return null;
  const file = path.join(dir, DEVICE_TARBALL);
  try {
    const info = JSON.parse(fs.readFileSync(path.join(dir, DEVICE_TARBALL_INFO), 'utf8')) as { version?: unknown };
    if (typeof info.version !== 'string' || !fs.existsSync(file)) return null;
    return { file, version: info.version };
  } catch {
    return null;
  }
}

/** A URL whose host is this machine only: localhost (and *.localhost), 127.0.0.0/8, ::1, 0.0.0.0. */
export function isLoopbackUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  } catch {
    return false;
  }
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (!ipaddr.isValid(host)) return false;
  const address = ipaddr.process(host);
  return address.range() === 'loopback' || address.range() === 'unspecified';
}

/**
 * This machine's addresses another machine on its networks may reach it at: every interface's, less
 * loopback and link-local ones (fe80::, which need a zone), IPv4 first.
 */
export function networkAddresses(interfaces = os.networkInterfaces()): string[] {
  const all = Object.values(interfaces).flatMap((list) => list ?? []);
  const usable = all.filter((a) => !a.internal && !(a.family === 'IPv6' && ipaddr.parse(a.address).range() === 'linkLocal'));
  const v4 = usable.filter((a) => a.family === 'IPv4').map((a) => a.address);
  const v6 = usable.filter((a) => a.family === 'IPv6').map((a) => a.address);
  return [...new Set([...v4, ...v6])];
}
