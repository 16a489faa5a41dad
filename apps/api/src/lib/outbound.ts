import dns from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import ipaddr from 'ipaddr.js';
import { Agent, fetch as undiciFetch } from 'undici';
import { outboundErrors, type OutboundRefusal } from '@latchkey/contract';
import { AppError } from '../errors.js';

/**
 * The one way the platform calls a URL an owner gave it (webhook endpoints, OpenID issuers and their
 * JWKS). Server-side request forgery is refused where it can be decided for sure: on the address the
 * socket actually connects to. The agent's `connect.lookup` resolves the host, refuses the connection if
 * any address is not public unicast, and hands exactly the checked addresses to the socket, so nothing
 * can re-resolve the name in between (DNS rebinding). Literal IPs skip DNS and are checked before any
 * connection. Redirects are followed here, one hop at a time, each hop checked again. The body is read
 * here too, under the size cap and the same deadline, so a slow or endless answer is refused as well.
 */

export interface OutboundInit extends RequestInit {
  /** Whole exchange, redirects and body included. */
  timeoutMs?: number;
  /** Largest body accepted, in bytes. */
  maxBytes?: number;
}

export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export interface OutboundOptions {
  /**
   * Hosts (names or literal IPs, lower-case, no port) let through to any address and over http too:
   * OUTBOUND_ALLOW, for development and tests only.
   */
  allowHosts?: readonly string[];
  /**
   * Set while the service runs with its development defaults: a refused http or loopback/private URL
   * then says (as the error's `hint`) which host OUTBOUND_ALLOW would let through.
   */
  hints?: boolean;
  /** Tests put a fake DNS here; default: the system resolver (getaddrinfo). */
  resolve?: Resolver;
}

export const OUTBOUND_DEFAULT_TIMEOUT_MS = 5_000;
export const OUTBOUND_DEFAULT_MAX_BYTES = 1024 * 1024;
export const OUTBOUND_MAX_REDIRECTS = 5;

/** A refusal: 400 for a URL that may never be called, 422 for a destination that answered badly. */
export class OutboundError extends AppError {
  /** `hints`: the refusal names (as its `hint`) the host OUTBOUND_ALLOW would let through. */
  constructor(
    readonly reason: OutboundRefusal,
    detail?: string,
    hints = false,
  ) {
    super(URL_REFUSALS.has(reason) ? 400 : 422, detail ? `${outboundErrors[reason]}: ${detail}` : outboundErrors[reason]);
    this.name = 'OutboundError';
    // The host without its port (OUTBOUND_ALLOW names hosts), for the two refusals it lifts.
    if (hints && detail && (reason === 'notHttps' || reason === 'privateAddress'))
      this.hint = { outboundAllow: detail.replace(/:\d+$/, '').replace(/^\[|\]$/g, '').toLowerCase() };
  }
}
const URL_REFUSALS = new Set<OutboundRefusal>(['invalidUrl', 'notHttps', 'credentials', 'privateAddress', 'badRedirect']);

/**
 * Cloud metadata services that sit on public-looking addresses (the link-local and unique-local ones,
 * 169.254.169.254 and fd00:ec2::254, are refused with their ranges already).
 */
const METADATA_ADDRESSES = new Set(['168.63.129.16', '100.100.100.200', '192.0.0.192']);

/** True only for public unicast addresses; IPv4-mapped IPv6 is judged as the IPv4 address it carries. */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  // Everything else ipaddr.js names (private, loopback, linkLocal, uniqueLocal, carrierGradeNat, multicast,
  // unspecified, broadcast, reserved, 6to4, teredo, rfc6052 NAT64 …) may reach inside the network.
  return ip.range() === 'unicast' && !METADATA_ADDRESSES.has(ip.toString());
}

const systemResolve: Resolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const NULL_BODY = new Set([101, 204, 205, 304]);

/**
 * One service's outbound guard: its OUTBOUND_ALLOW hosts, whether refusals carry hints, its resolver and
 * its connection pool. Each app has its own (app.outbound), so two apps in one process do not share them.
 */
export class Outbound {
  private readonly allowHosts: ReadonlySet<string>;
  private readonly hints: boolean;
  private readonly resolve: Resolver;
  private readonly agent: Agent;

  constructor(options: OutboundOptions = {}) {
    this.allowHosts = new Set((options.allowHosts ?? []).map((h) => h.trim().toLowerCase()).filter(Boolean));
    this.hints = options.hints ?? false;
    this.resolve = options.resolve ?? systemResolve;
    this.agent = new Agent({
      // A kept-alive connection stays pinned to the address that was checked when it opened.
      connect: { lookup: this.guardedLookup.bind(this) as never, timeout: OUTBOUND_DEFAULT_TIMEOUT_MS },
    });
  }

  /** Closes the connection pool (the app's onClose). */
  async close(): Promise<void> {
    await this.agent.close().catch(() => {});
  }

  private refusal(reason: OutboundRefusal, detail?: string): OutboundError {
    return new OutboundError(reason, detail, this.hints);
  }

  private guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
    const host = hostname.toLowerCase();
    this.resolve(host).then(
      (found) => {
        const addresses = options.family === 4 || options.family === 6 ? found.filter((a) => a.family === options.family) : found;
        if (addresses.length === 0) return callback(this.refusal('unresolvable', host), []);
        if (!this.allowHosts.has(host) && addresses.some((a) => !isPublicAddress(a.address)))
          return callback(this.refusal('privateAddress', host), []);
        if (options.all) return callback(null, addresses);
        const [first] = addresses as [LookupAddress];
        return callback(null, first.address, first.family);
      },
      () => callback(this.refusal('unresolvable', host), []),
    );
  }

  /** Refuses before connecting what can be refused from the URL alone. */
  private checkUrl(raw: string | URL, redirected: boolean): URL {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw this.refusal(redirected ? 'badRedirect' : 'invalidUrl');
    }
    const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
    const allowed = this.allowHosts.has(host);
    const refuse = (reason: OutboundRefusal) => this.refusal(redirected ? 'badRedirect' : reason, url.host);
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowed)) throw refuse('notHttps');
    if (url.username || url.password) throw refuse('credentials');
    // The WHATWG parser has already turned 0x7f.1, 2130706433 and friends into dotted IPv4.
    if (ipaddr.isValid(host) && !allowed && !isPublicAddress(host)) throw refuse('privateAddress');
    return url;
  }

  /**
   * Refuses, without calling it, a URL the guard would refuse to call: syntax, scheme, credentials, and
   * every address its host resolves to (when it is registered; each call checks again where it connects).
   */
  async checkOutboundUrl(raw: string): Promise<URL> {
    const url = this.checkUrl(raw, false);
    const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
    if (this.allowHosts.has(host) || ipaddr.isValid(host)) return url;
    let found: LookupAddress[];
    try {
      found = await this.resolve(host);
    } catch {
      throw this.refusal('unresolvable', host);
    }
    if (found.length === 0) throw this.refusal('unresolvable', host);
    if (found.some((a) => !isPublicAddress(a.address))) throw this.refusal('privateAddress', host);
    return url;
  }

  async safeFetch(url: string, init: OutboundInit = {}): Promise<Response> {
    const { timeoutMs = OUTBOUND_DEFAULT_TIMEOUT_MS, maxBytes = OUTBOUND_DEFAULT_MAX_BYTES, signal: callerSignal, ...rest } = init;
    const deadline = AbortSignal.timeout(timeoutMs);
    const signal = callerSignal ? AbortSignal.any([deadline, callerSignal]) : deadline;
    let target = this.checkUrl(url, false);
    let method = (rest.method ?? 'GET').toUpperCase();
    let body = rest.body;
    const headers = new Headers(rest.headers);

    try {
      for (let hop = 0; ; hop += 1) {
        const response = await undiciFetch(target, {
          ...(rest as object),
          method,
          body: body as never,
          headers: plain(headers),
          redirect: 'manual',
          signal,
          dispatcher: this.agent,
        });
        const location = response.headers.get('location');
        if (REDIRECTS.has(response.status) && location) {
          await response.body?.cancel().catch(() => {});
          if (hop >= OUTBOUND_MAX_REDIRECTS) throw new OutboundError('tooManyRedirects', `more than ${OUTBOUND_MAX_REDIRECTS}`);
          const next = this.checkUrl(new URL(location, target), true);
          if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
            method = 'GET';
            body = undefined;
            headers.delete('content-type');
            headers.delete('content-length');
          }
          // Like browsers: credentials are for the origin they were given to.
          if (next.origin !== target.origin) for (const h of ['authorization', 'cookie', 'proxy-authorization']) headers.delete(h);
          target = next;
          continue;
        }
        const bytes = await readCapped(response, maxBytes, target.host);
        return new Response(NULL_BODY.has(response.status) ? null : (bytes as Uint8Array<ArrayBuffer>), {
          status: response.status,
          statusText: response.statusText,
          headers: Object.fromEntries(response.headers),
        });
      }
    } catch (error) {
      throw asOutboundError(error, deadline, target.host);
    }
  }
}

type LookupCallback = (err: Error | null, address: string | LookupAddress[], family?: number) => void;


function plain(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => (out[name] = value));
  return out;
}

async function readCapped(response: Awaited<ReturnType<typeof undiciFetch>>, maxBytes: number, host: string): Promise<Uint8Array<ArrayBuffer>> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw new OutboundError('tooLarge', `${host} sent more than ${maxBytes} bytes`);
  }
  if (!response.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new OutboundError('tooLarge', `${host} sent more than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total);
}

/** undici wraps what went wrong in `TypeError: fetch failed`; find our refusal or name the failure. */
function asOutboundError(error: unknown, deadline: AbortSignal, host: string): unknown {
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth += 1) {
    if (e instanceof OutboundError) return e;
  }
  if (deadline.aborted) return new OutboundError('timeout', host);
  if ((error as { name?: string }).name === 'AbortError') return error;
  return new OutboundError('unreachable', host);
}
