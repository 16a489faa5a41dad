import { createHash, createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Test helper. s3rver accepts any SigV4 signature ("V4 signatures have incomplete support"), so on its own
 * it cannot show that a presigned URL binds the key and the Content-Type. This proxy sits in front of it
 * and checks presigned (query-string) SigV4 requests the way S3 does — canonical request over method,
 * path, query, the signed headers as actually sent, UNSIGNED-PAYLOAD — answering 403
 * SignatureDoesNotMatch or AccessDenied (expired); everything else passes through untouched.
 */
export async function startSigV4Proxy(target: string, credentials: { accessKeyId: string; secretAccessKey: string }) {
  const upstream = new URL(target);
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://proxy');
    if (url.searchParams.has('X-Amz-Signature')) {
      const failure = checkPresigned(req, url, credentials);
      if (failure) {
        req.resume();
        res.writeHead(403, { 'content-type': 'application/xml' });
        res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${failure}</Code></Error>`);
        return;
      }
    }
    const forward = http.request(
      { hostname: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { endpoint: `http://127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const encode = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();

function checkPresigned(req: http.IncomingMessage, url: URL, creds: { accessKeyId: string; secretAccessKey: string }): string | null {
  const q = url.searchParams;
  const [accessKeyId, date, region, service, terminator] = (q.get('X-Amz-Credential') ?? '').split('/');
  const amzDate = q.get('X-Amz-Date') ?? '';
  const signedHeaders = (q.get('X-Amz-SignedHeaders') ?? '').split(';');
  if (q.get('X-Amz-Algorithm') !== 'AWS4-HMAC-SHA256' || accessKeyId !== creds.accessKeyId || terminator !== 'aws4_request') return 'SignatureDoesNotMatch';
  const query = [...q.entries()]
    .filter(([k]) => k !== 'X-Amz-Signature')
    .map(([k, v]) => [encode(k), encode(v)] as const)
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const headers = signedHeaders.map((h) => `${h}:${String(req.headers[h] ?? '').trim().replace(/\s+/g, ' ')}\n`).join('');
  const canonical = [req.method, url.pathname, query, headers, signedHeaders.join(';'), 'UNSIGNED-PAYLOAD'].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, createHash('sha256').update(canonical).digest('hex')].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${creds.secretAccessKey}`, date ?? ''), region ?? ''), service ?? ''), 'aws4_request');
  if (createHmac('sha256', key).update(toSign).digest('hex') !== q.get('X-Amz-Signature')) return 'SignatureDoesNotMatch';
  const issued = Date.parse(amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
  if (!(issued + Number(q.get('X-Amz-Expires')) * 1000 > Date.now())) return 'AccessDenied';
  return null;
}
