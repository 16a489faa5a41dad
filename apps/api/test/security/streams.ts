import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';

type Answer = Pick<LightMyRequestResponse, 'statusCode' | 'headers' | 'body' | 'json'>;

/** Routes that answer with a stream that stays open (server-sent events): inject would wait on it forever. */
export const isStreamingRoute = (url: string) => url.endsWith('/lock/events');

/** inject, or injectStream for a streaming route. */
export function injectAny(app: FastifyInstance, url: string, options: InjectOptions): Promise<Answer> {
  return isStreamingRoute(url) ? injectStream(app, options) : app.inject(options);
}

/**
 * inject for a streaming route: an event stream is taken as answered once its head is out (then closed);
 * any other answer (401, 404 …) is read to its end like a plain inject's.
 */
export async function injectStream(app: FastifyInstance, options: InjectOptions): Promise<Answer> {
  const res = await app.inject({ ...options, payloadAsStream: true });
  const stream = res.stream();
  if (String(res.headers['content-type']).startsWith('text/event-stream')) {
    stream.destroy();
    return { statusCode: res.statusCode, headers: res.headers, body: '', json: () => null as never };
  }
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  const body = Buffer.concat(chunks).toString('utf8');
  return { statusCode: res.statusCode, headers: res.headers, body, json: () => JSON.parse(body) as never };
}
