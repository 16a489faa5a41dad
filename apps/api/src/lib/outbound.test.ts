import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isPublicAddress, Outbound, OutboundError, type OutboundInit, type OutboundOptions, type Resolver } from './outbound.js';

/** The guard under test: each test configures a new one (and the last is closed). */
let outbound = new Outbound();
function configureOutbound(options: OutboundOptions): void {
  void outbound.close();
  outbound = new Outbound(options);
}
const safeFetch = (url: string, init?: OutboundInit) => outbound.safeFetch(url, init);

/**
 * The outbound guard against real sockets: a local HTTP server stands in for every destination (it is
 * loopback, so it is reachable only when a test puts 127.0.0.1 on the allow list) and counts what reaches
 * it; a fake resolver stands in for DNS names that point inside the network.
 */
let server: http.Server;
let base: string;
let port: number;
const hits: string[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/ok') return res.end('hello');
    if (url.pathname === '/echo') {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => res.end(JSON.stringify({ method: req.method, body, auth: req.headers.authorization ?? null })));
      return;
    }
    if (url.pathname === '/redirect') {
      res.writeHead(Number(url.searchParams.get('status') ?? 302), { location: url.searchParams.get('to') ?? '/ok' });
      return res.end();
    }
    if (url.pathname === '/loop') {
      res.writeHead(302, { location: '/loop' });
      return res.end();
    }
    if (url.pathname === '/big') {
      res.writeHead(200, { 'content-length': String(2 * 1024 * 1024) });
      return res.end(Buffer.alloc(2 * 1024 * 1024, 97));
    }
    if (url.pathname === '/big-chunked') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      for (let i = 0; i < 64; i += 1) res.write(Buffer.alloc(32 * 1024, 98));
      return res.end();
    }
    if (url.pathname === '/slow-headers') {
      const t = setTimeout(() => res.end('late'), 3000);
      res.on('close', () => clearTimeout(t));
      return;
    }
    if (url.pathname === '/slow-body') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('a');
      const t = setInterval(() => res.write('a'), 100);
      res.on('close', () => clearInterval(t));
      return;
    }
    res.statusCode = 404;
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  configureOutbound({});
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

afterEach(() => {
  hits.length = 0;
  configureOutbound({});
});

async function refusal(promise: Promise<unknown>): Promise<OutboundError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OutboundError);
  return error as OutboundError;
}

const fakeDns =
  (table: Record<string, string[]>): Resolver =>
  async (host) => {
    const addresses = table[host];
    if (!addresses) throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

describe('isPublicAddress', () => {
  it.each([
    '127.0.0.1', '127.8.9.10', '10.0.0.1', '172.16.5.4', '192.168.1.1', '169.254.169.254', '100.64.0.1', '100.100.100.200',
    '168.63.129.16', '0.0.0.0', '224.0.0.1', '255.255.255.255', '192.0.2.1', '198.18.0.1', '240.0.0.1', '::1', '::',
    'fe80::1', 'fc00::1', 'fd00:ec2::254', 'ff02::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:169.254.169.254',
    '64:ff9b::a00:1', '2002:a00:1::', '2001:db8::1', 'not-an-ip',
  ])('refuses %s', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });
  it.each(['8.8.8.8', '93.184.216.34', '1.1.1.1', '2606:4700:4700::1111', '2a00:1450:4001::200e', '::ffff:8.8.8.8'])('accepts %s', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });
});

describe('safeFetch refuses before connecting', () => {
  it.each([
    ['https://127.0.0.1/', 'loopback'],
    [`https://127.0.0.1:${0}/`, 'loopback with a port'],
    ['https://[::1]/', 'IPv6 loopback'],
    ['https://10.1.2.3/', 'private'],
    ['https://192.168.0.10/', 'private'],
    ['https://172.31.255.1/', 'private'],
    ['https://169.254.169.254/latest/meta-data/', 'cloud metadata (link-local)'],
    ['https://[fd00:ec2::254]/', 'cloud metadata (unique-local)'],
    ['https://100.100.100.200/', 'cloud metadata (CGNAT)'],
    ['https://100.64.0.1/', 'CGNAT'],
    ['https://[fe80::1]/', 'IPv6 link-local'],
    ['https://[fc00::1]/', 'unique-local'],
    ['https://224.0.0.1/', 'multicast'],
    ['https://0.0.0.0/', 'unspecified'],
    ['https://[::]/', 'IPv6 unspecified'],
    ['https://[::ffff:127.0.0.1]/', 'IPv4-mapped loopback'],
    ['https://[::ffff:a9fe:a9fe]/', 'IPv4-mapped metadata'],
    ['https://0x7f.1/', 'hex-written loopback'],
    ['https://2130706433/', 'integer-written loopback'],
    ['https://017700000001/', 'octal-written loopback'],
  ])('%s (%s): 400', async (url) => {
    const error = await refusal(safeFetch(url));
    expect(error.statusCode).toBe(400);
    expect(error.reason).toBe('privateAddress');
  });

  it('plain http, other schemes, credentials and malformed URLs: 400', async () => {
    expect((await refusal(safeFetch('http://example.com/hook'))).reason).toBe('notHttps');
    expect((await refusal(safeFetch('ftp://example.com/'))).reason).toBe('notHttps');
    expect((await refusal(safeFetch('file:///etc/passwd'))).reason).toBe('notHttps');
    expect((await refusal(safeFetch('gopher://example.com/'))).reason).toBe('notHttps');
    expect((await refusal(safeFetch('https://user:secret@example.com/'))).reason).toBe('credentials');
    for (const bad of ['not a url', '', 'https://', '//example.com/x']) {
      const error = await refusal(safeFetch(bad));
      expect(error.reason).toBe('invalidUrl');
      expect(error.statusCode).toBe(400);
    }
  });

  it('loopback over http is refused without the allow list, and nothing arrives', async () => {
    expect((await refusal(safeFetch(`${base}/ok`))).reason).toBe('notHttps');
    expect((await refusal(safeFetch(`https://127.0.0.1:${port}/ok`))).reason).toBe('privateAddress');
    expect(hits).toEqual([]);
  });
});

describe('safeFetch checks the addresses a name resolves to', () => {
  it('localhost (system resolver) is refused', async () => {
    const error = await refusal(safeFetch(`https://localhost:${port}/ok`));
    expect(error.reason).toBe('privateAddress');
    expect(error.statusCode).toBe(400);
    expect(error.message).toContain('localhost');
    expect(hits).toEqual([]);
  });

  it.each([
    ['metadata.test', ['169.254.169.254']],
    ['internal.test', ['10.0.0.7']],
    ['v6.test', ['fd12:3456::1']],
    ['mapped.test', ['::ffff:192.168.1.1']],
    ['cgnat.test', ['100.64.3.3']],
    ['mixed.test', ['93.184.216.34', '127.0.0.1']],
  ])('%s → %j is refused', async (name, addresses) => {
    configureOutbound({ resolve: fakeDns({ [name]: addresses }) });
    const error = await refusal(safeFetch(`https://${name}:${port}/ok`));
    expect(error.reason).toBe('privateAddress');
    expect(error.statusCode).toBe(400);
    expect(hits).toEqual([]);
  });

  it('connects only to the address it checked: a name that re-resolves to loopback never reaches it', async () => {
    // A DNS-rebinding attacker answers the check with a public address and the connection with loopback.
    let calls = 0;
    configureOutbound({
      resolve: async () => {
        calls += 1;
        return [{ address: calls === 1 ? '203.0.113.9' : '127.0.0.1', family: 4 }];
      },
    });
    const error = await refusal(safeFetch(`https://rebind.test:${port}/ok`, { timeoutMs: 300 }));
    expect(calls).toBe(1);
    expect(['timeout', 'unreachable', 'privateAddress']).toContain(error.reason);
    expect(hits).toEqual([]);
  });

  it('an unresolvable name: 422', async () => {
    configureOutbound({ resolve: fakeDns({}) });
    const error = await refusal(safeFetch('https://nowhere.test/'));
    expect(error.reason).toBe('unresolvable');
    expect(error.statusCode).toBe(422);
  });
});

describe('safeFetch with the allow list (OUTBOUND_ALLOW)', () => {
  it('lets a listed host through over http, with method, body and headers', async () => {
    configureOutbound({ allowHosts: ['127.0.0.1'] });
    const ok = await safeFetch(`${base}/ok`);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe('hello');
    const echo = await safeFetch(`${base}/echo`, { method: 'POST', body: '{"a":1}', headers: { authorization: 'Bearer x' } });
    expect(await echo.json()).toEqual({ method: 'POST', body: '{"a":1}', auth: 'Bearer x' });
  });

  it('follows redirects on allowed hosts; 303 turns POST into GET; 307 keeps it', async () => {
    configureOutbound({ allowHosts: ['127.0.0.1'] });
    const followed = await safeFetch(`${base}/redirect?to=/ok`);
    expect(await followed.text()).toBe('hello');
    const seeOther = await safeFetch(`${base}/redirect?status=303&to=/echo`, { method: 'POST', body: 'x' });
    expect(await seeOther.json()).toMatchObject({ method: 'GET', body: '' });
    const temporary = await safeFetch(`${base}/redirect?status=307&to=/echo`, { method: 'POST', body: 'x' });
    expect(await temporary.json()).toMatchObject({ method: 'POST', body: 'x' });
  });

  it('re-checks every redirect hop: to an unlisted loopback name, to metadata, to http, to a private name', async () => {
    configureOutbound({ allowHosts: ['127.0.0.1'] });
    for (const to of [`http://localhost:${port}/ok`, 'https://169.254.169.254/latest/meta-data/', 'http://example.com/', 'file:///etc/passwd', `https://[::1]:${port}/ok`]) {
      hits.length = 0;
      const error = await refusal(safeFetch(`${base}/redirect?to=${encodeURIComponent(to)}`));
      expect(error.statusCode).toBe(400);
      expect(error.reason).toBe('badRedirect');
      expect(hits).toHaveLength(1);
    }
    configureOutbound({ allowHosts: ['127.0.0.1'], resolve: fakeDns({ 'inside.test': ['10.9.9.9'] }) });
    const error = await refusal(safeFetch(`${base}/redirect?to=${encodeURIComponent('https://inside.test/')}`));
    expect(error.reason).toBe('privateAddress');
  });

  it('drops credentials when a redirect changes origin', async () => {
    configureOutbound({ allowHosts: ['127.0.0.1', 'localhost'] });
    const to = encodeURIComponent(`http://localhost:${port}/echo`);
    const response = await safeFetch(`${base}/redirect?to=${to}`, { headers: { authorization: 'Bearer secret' } });
    expect(await response.json()).toMatchObject({ auth: null });
  });

  it('stops after too many redirects: 422', async () => {
    configureOutbound({ allowHosts: ['127.0.0.1'] });
    const error = await refusal(safeFetch(`${base}/loop`));
    expect(error.reason).toBe('tooManyRedirects');
    expect(error.statusCode).toBe(422);
    expect(hits).toHaveLength(6);
  });

  it('refuses an oversize answer, declared or streamed: 422', async () => {
    configureOutbound({ allowHosts: ['127.0.0.1'] });
    const declared = await refusal(safeFetch(`${base}/big`, { maxBytes: 1000 }));
    expect(declared.reason).toBe('tooLarge');
    expect(declared.statusCode).toBe(422);
    const streamed = await refusal(safeFetch(`${base}/big-chunked`, { maxBytes: 100_000 }));
    expect(streamed.reason).toBe('tooLarge');
    const fits = await safeFetch(`${base}/big-chunked`, { maxBytes: 4 * 1024 * 1024 });
    expect((await fits.arrayBuffer()).byteLength).toBe(64 * 32 * 1024);
  });

  it('refuses a slow answer, headers or body: 422 within the deadline', async () => {
    configureOutbound({ allowHosts: ['127.0.0.1'] });
    for (const path of ['/slow-headers', '/slow-body']) {
      const started = Date.now();
      const error = await refusal(safeFetch(`${base}${path}`, { timeoutMs: 300 }));
      expect(error.reason).toBe('timeout');
      expect(error.statusCode).toBe(422);
      expect(Date.now() - started).toBeLessThan(2000);
    }
  });

  it('a closed port: 422 unreachable', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    configureOutbound({ allowHosts: ['127.0.0.1'] });
    const error = await refusal(safeFetch(`http://127.0.0.1:${closedPort}/`));
    expect(error.reason).toBe('unreachable');
    expect(error.statusCode).toBe(422);
  });
});
