import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  applicationIdParamsSchema,
  emailPreviewParamsSchema,
  emailPreviewQuerySchema,
  errorBodySchema,
  TEST_EMAIL_LIMIT,
  testEmailBodySchema,
  testEmailResultSchema,
} from '@latchkey/contract';
import { PREVIEW_CSP } from '../../lib/preview-csp.js';
import { refuseIfExceeded } from '../../plugins/rate-limit.js';
import { createPreviewCache, renderPreview } from './email-preview.service.js';
import { sendTestEmail } from './test-email.js';

/** The query fields that change what the sample shows; `lang` only picks the language. */
const OVERRIDES = ['ctaHeadline', 'ctaAbridged', 'ctaTarget', 'primaryColour', 'secondaryColour', 'senderName', 'onlySendEssentialEmails', 'cta'] as const;

/** Whether the raw query asks for caller-chosen content (an empty value is ignored, as the schema does). */
export function asksForOverrides(query: unknown): boolean {
  if (!query || typeof query !== 'object') return false;
  return OVERRIDES.some((name) => {
    const value = (query as Record<string, unknown>)[name];
    return Array.isArray(value) ? value.some((v) => v !== '') : value !== undefined && value !== '';
  });
}

/**
 * GET /email/preview/{applicationId}: the branded sample email.
 *
 * Without a token it shows only the application's saved branding, exactly what its
 * emails would show — never caller-chosen text, link or colours on the portal's origin. The overrides
 * (the card's unsaved form) are answered only to a signed-in owner of the application (bearer token:
 * 401 without one, the usual 404 for anyone else), so the portal fetches them and shows the HTML in a
 * sandboxed `srcdoc` frame instead of pointing the frame at a URL.
 */
export async function emailPreviewRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const previews = createPreviewCache();
  const ownerForOverrides = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    if (!asksForOverrides(request.query)) return done();
    app.authenticate(request, reply, (error) => (error ? done(error) : app.requireOwner(request, reply, done)));
  };

  app.get(
    '/email/preview/:applicationId',
    {
      config: { public: true },
      onRequest: ownerForOverrides,
      schema: {
        tags: ['email'],
        summary:
          'Branded email preview (HTML) of the saved branding; the overrides (empty values are ignored) need the bearer token of an owner of the application',
        security: [{}, { bearer: [] }],
        params: emailPreviewParamsSchema,
        querystring: emailPreviewQuerySchema,
        produces: ['text/html'],
        response: { 200: z.string().describe('text/html'), 400: errorBodySchema, 401: errorBodySchema, 404: errorBodySchema },
      },
    },
    async (request, reply) => {
      const html = await renderPreview(app.db, previews, request.params.applicationId, request.query);
      return reply
        .type('text/html; charset=utf-8')
        .header('content-security-policy', PREVIEW_CSP)
        .header('x-frame-options', 'SAMEORIGIN')
        // An owner's unsaved form is theirs alone: no cache keeps it.
        .header('cache-control', asksForOverrides(request.query) ? 'private, no-store' : 'no-cache')
        .send(html);
    },
  );

  // The card's unsaved branding, as the sample email, to the signed-in owner. A few per owner
  // and window (on top of the general limit): it sends real mail when SMTP is configured.
  const perOwner = app.createRateLimit({
    keyGenerator: (request) => `test-email:${request.user.id}`,
    max: TEST_EMAIL_LIMIT.max,
    timeWindow: TEST_EMAIL_LIMIT.windowSeconds * 1000,
  });
  app.post(
    '/platform/application/:applicationId/email/test',
    {
      onRequest: [app.authenticate, app.requireOwner],
      preHandler: async (request) => {
        refuseIfExceeded(await perOwner(request));
        // An account whose email is not verified sends only a few a day.
        await app.chargeUnverifiedEmail(request);
      },
      schema: {
        tags: ['email'],
        summary: 'Send the sample email in the given (unsaved) branding to the signed-in owner',
        security: [{ bearer: [] }],
        params: applicationIdParamsSchema,
        body: testEmailBodySchema,
        response: { 200: testEmailResultSchema, 400: errorBodySchema, 401: errorBodySchema, 404: errorBodySchema, 422: errorBodySchema, 429: errorBodySchema, 502: errorBodySchema },
      },
    },
    async (request) => sendTestEmail(app, request.params.applicationId, request.user.email, request.body),
  );
}
