import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import { redactUrl } from './redact-url.js';

/**
 * Fastify's per-request log lines. By default none: Fastify's own "incoming request" and "request
 * completed" (two lines a request, the full URL in the first) took the authenticated read from about
 * 15k to 7.5k requests a second at LOG_LEVEL=info, and put every one-time secret a URL carried in the log.
 * ACCESS_LOG=true writes one line per request, when its answer has gone, with the URL redacted
 * (lib/redact-url.ts). A request that fails after its answer began ("request errored") is logged either way.
 */
export class RequestLog extends LogController {
  readonly #accessLog: boolean;

  constructor(accessLog: boolean) {
    super({ disableRequestLogging: false });
    this.#accessLog = accessLog;
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    else if (this.#accessLog) reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }

  override routeNotFound(request: FastifyRequest): void {
    if (this.#accessLog) request.log.info({ req: request }, 'route not found');
  }
}

/** `req` in a log line: the method, the redacted URL and the caller's address — never a query value. */
export function serializeRequest(request: FastifyRequest | { method?: string; url?: string; socket?: { remoteAddress?: string } }): {
  method: string | undefined;
  url: string;
  remoteAddress: string | undefined;
} {
  const remoteAddress = 'ip' in request ? request.ip : request.socket?.remoteAddress;
  return { method: request.method, url: redactUrl(request.url ?? ''), remoteAddress };
}
