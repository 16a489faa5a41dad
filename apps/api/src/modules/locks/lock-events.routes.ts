import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { applicationIdParamsSchema, errorBodySchema } from '@latchkey/contract';
import type { LiveEvent } from '../../plugins/live-events.js';

const E = errorBodySchema;

/**
 * GET /platform/application/{id}/lock/events: the application's locks live, as server-sent events —
 * `lock` (the Lock), `lock-removed` ({id}), `activity` (the LockLogEntry), `share` ({lockId, userId}) and
 * `resync` (read everything again). The portal reads it with fetch and its bearer header (EventSource
 * cannot send one), so the usual owner check applies. Streams end when the service closes.
 */
export async function lockEventsRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const open = new Set<ServerResponse>();
  app.addHook('preClose', async () => {
    for (const raw of open) raw.end();
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
