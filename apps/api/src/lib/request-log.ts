import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';
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

type LogArgs = [object | string, string?, ...unknown[]];

/**
 * Fastify's childLoggerFactory: each request's logger, made only when something logs with it. Fastify
 * makes a child logger for every request to bind its id, and pino's child() serializes those bindings at
 * once — at the default level, where a request that goes well logs nothing, work with nothing to show.
 */
export function lazyChildLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new LazyChildLogger(logger, bindings, options);
}

class LazyChildLogger implements FastifyBaseLogger {
  #made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private get made(): FastifyBaseLogger {
    return (this.#made ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.#made?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: string) {
    this.made.level = level;
  }

  fatal(...args: LogArgs): void {
    this.made.fatal(...args);
  }

  error(...args: LogArgs): void {
    this.made.error(...args);
  }

  warn(...args: LogArgs): void {
    this.made.warn(...args);
  }

  info(...args: LogArgs): void {
    this.made.info(...args);
  }

  debug(...args: LogArgs): void {
    this.made.debug(...args);
  }

  trace(...args: LogArgs): void {
    this.made.trace(...args);
  }

  silent(...args: LogArgs): void {
    this.made.silent(...args);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.made.child(bindings, options);
  }
}
