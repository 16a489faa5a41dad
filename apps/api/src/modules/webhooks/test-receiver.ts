import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  at: number;
}

/** What the receiver does with a request: answer with a status, or never answer ('hang'). */
export type Answer = number | 'hang';

/**
 * A webhook receiver for tests: a real HTTP server on 127.0.0.1 (let through the outbound guard with
 * OUTBOUND_ALLOW=127.0.0.1) that records every delivery and answers as `answer` says.
 */
export async function startReceiver(answer: (r: Received, count: number) => Answer = () => 200) {
  const received: Received[] = [];
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = {
        id: String(req.headers['webhook-id']),
        timestamp: String(req.headers['webhook-timestamp']),
        signature: String(req.headers['webhook-signature']),
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      received.push(r);
      const a = answer(r, received.length);
      if (a === 'hang') hanging.add(res);
      else res.writeHead(a, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    setAnswer(next: typeof answer) {
      answer = next;
    },
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Verifies a delivery's signature as a receiver following Standard Webhooks would. */
export function verifySignature(secret: string, r: Received): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${r.id}.${r.timestamp}.${r.body}`).digest('base64');
  return r.signature.split(' ').some((s) => s === `v1,${expected}`);
}
