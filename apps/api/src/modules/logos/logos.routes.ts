import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  apiErrors,
  applicationIdParamsSchema,
  errorBodySchema,
  LOGO_CONTENT_TYPES,
  LOGO_MAX_BYTES,
  logoUploadRequestSchema,
  logoUploadResponseSchema,
  type ErrorBody,
} from '@latchkey/contract';
import { AppError } from '../../errors.js';
import { LocalLogoStorage } from '../../plugins/storage/local.js';
import { authoriseUpload, createLogoUpload, receiveUpload } from './logos.service.js';

const tags = ['logos'];
const bearer = [{ bearer: [] }];

/**
 * Logo upload, under the API prefix: the owner asks for an upload URL; with the local driver the service is
 * also the upload host (PUT /uploads/logos/…), authorised by the URL's signature alone.
 */
export async function logosRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();

  app.post(
    '/platform/application/:applicationId/logo',
    {
      onRequest: [app.authenticate, app.requireOwner],
      schema: {
        tags,
        security: bearer,
        params: applicationIdParamsSchema,
        body: logoUploadRequestSchema,
        response: { 200: logoUploadResponseSchema, 400: errorBodySchema, 401: errorBodySchema, 404: errorBodySchema },
      },
    },
    async (request) => createLogoUpload(app.storage, request.params.applicationId, request.body.contentType),
  );

  const storage = app.storage;
  if (!(storage instanceof LocalLogoStorage)) return;
  app.decorateRequest('logoObjectKey', '');

  // Reads the image body itself so that an oversize upload gets the contract's too-big message (not the generic
  // 413) and stops being read at the limit. Scoped to this plugin: no other route accepts images.
  app.addContentTypeParser([...LOGO_CONTENT_TYPES], (request, payload, done) => {
    if (Number(request.headers['content-length']) >= LOGO_MAX_BYTES) return done(new AppError(413, apiErrors.uploadTooBig), undefined);
    const chunks: Buffer[] = [];
    let size = 0;
    let finished = false;
    payload.on('data', (chunk: Buffer) => {
      if (finished) return;
      size += chunk.length;
      if (size >= LOGO_MAX_BYTES) {
        finished = true;
        payload.resume();
        return done(new AppError(413, apiErrors.uploadTooBig), undefined);
      }
      chunks.push(chunk);
    });
    payload.on('end', () => {
      if (!finished) {
        finished = true;
        done(null, Buffer.concat(chunks, size));
      }
    });
    payload.on('error', (error) => {
      if (!finished) {
        finished = true;
        done(error, undefined);
      }
    });
  });

  app.put(
    '/uploads/logos/*',
    {
      config: { public: true },
      bodyLimit: LOGO_MAX_BYTES + 64 * 1024,
      // Before the body is read: a bad, expired or retargeted URL costs nothing.
      onRequest: async (request: FastifyRequest) => {
        const key = (request.params as { '*'?: string })['*'] ?? '';
        request.logoObjectKey = authoriseUpload(storage, key, request.query as Record<string, unknown>, request.headers['content-type']);
      },
      schema: {
        tags,
        summary: 'Upload target of a signed logo URL (local storage driver)',
        consumes: [...LOGO_CONTENT_TYPES],
        querystring: z.object({ expires: z.string(), sig: z.string() }),
        response: {
          200: z.object({}),
          400: errorBodySchema,
          403: errorBodySchema,
          413: errorBodySchema,
          415: errorBodySchema,
        },
      },
    },
    async (request) => {
      if (!Buffer.isBuffer(request.body)) throw new AppError(415, apiErrors.uploadTypeNotSigned);
      await receiveUpload(storage, request.logoObjectKey, request.body);
      return {};
    },
  );
}

/**
 * The CDN path (outside the API prefix). The local driver serves logos here; anything else under /cdn
 * is a JSON 404, never the portal's index.html. Served bytes can never act as a page: exact type,
 * nosniff, a CSP that allows nothing, and long caching (keys are never reused).
 */
export async function cdnRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const storage = app.storage;
  const notFound = (reply: FastifyReply) =>
    reply.code(404).header('cache-control', 'no-store').type('application/json').send({ code: 404, message: apiErrors.notFound } satisfies ErrorBody);

  app.get('/cdn/*', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    const key = (request.params as { '*'?: string })['*'] ?? '';
    const object = storage instanceof LocalLogoStorage ? await storage.get(key) : null;
    if (!object) return notFound(reply);
    return reply
      .header('content-type', object.contentType)
      .header('content-length', object.bytes.length)
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('content-security-policy', "default-src 'none'; sandbox")
      .header('cross-origin-resource-policy', 'cross-origin')
      .header('content-disposition', 'inline')
      .send(object.bytes);
  });
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the upload route's onRequest check. */
    logoObjectKey: string;
  }
}
