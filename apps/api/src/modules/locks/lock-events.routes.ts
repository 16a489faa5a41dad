import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { applicationIdParamsSchema, errorBodySchema } from '@latchkey/contract';
import type { LiveEvent } from '../../plugins/live-events.js';

const E = errorBodySchema;
/** The last thing a stream gets when the instance stops: reconnect in about a second (`retry`, in ms). */
export const RECONNECT_HINT = 'retry: 1000\nevent: reconnect\ndata: {}\n\n';

/**
 * GET /platform/application/{id}/lock/events: the application's locks live, as server-sent events —
 * `lock` (the Lock), `lock-removed` ({id}), `activity` (the LockLogEntry), `share` ({lockId, userId}) and
 * `resync` (read everything again). The portal reads it with fetch and its bearer header (EventSource
 * cannot send one), so the usual owner check applies. Streams end when the service closes.
 */
export async function lockEventsRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const open = new Set<ServerResponse>();
  // On shutdown (SIGTERM, a rolling restart) every stream ends at once with a reconnect hint, and its socket
  // with it: a kept-alive socket would hold server.close() until the browser tab closes. The portal
  // reconnects by itself (through the load balancer, to an instance that is up) and reloads what it shows.
  app.addHook('preClose', async () => {
    for (const raw of open) raw.end(RECONNECT_HINT, () => raw.destroy());
  });

  app.get(
    '/platform/application/:applicationId/lock/events',
    {
      onRequest: [app.authenticate, app.requireOwner],
      schema: {
        tags: ['locks'],
        security: [{ bearer: [] }],
        params: applicationIdParamsSchema,
        produces: ['text/event-stream'],
        response: { 200: z.string().describe('text/event-stream'), 401: E, 404: E },
      },
    },
    (request, reply) => {
      const raw = reply.raw;
      // From here the stream is written by hand; the headers set so far (security, CORS) go with it.
      reply.hijack();
      for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) raw.setHeader(name, value);
      raw.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        // nginx and similar proxies would otherwise buffer the stream.
        'x-accel-buffering': 'no',
      });
      raw.write(': connected\n\n');
      const send = (e: LiveEvent) => raw.write(`event: ${e.event}\ndata: ${e.data}\n\n`);
      const unsubscribe = app.liveEvents.subscribe(request.params.applicationId, send);
      const keepAlive = setInterval(() => raw.write(': keep-alive\n\n'), app.config.liveEvents.keepAliveMs);
      open.add(raw);
      raw.on('close', () => {
        clearInterval(keepAlive);
        unsubscribe();
        open.delete(raw);
      });
    },
  );
}
