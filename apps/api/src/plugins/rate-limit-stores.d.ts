// The stores @fastify/rate-limit counts in, which it ships without types of their own; rate-limit.ts counts
// the per-principal limit in them directly.
declare module '@fastify/rate-limit/store/LocalStore.js' {
  import type { FastifyRateLimitStore } from '@fastify/rate-limit';

  /** A fixed window per key, in memory: the least recently counted of more than `cache` keys (5,000) are forgotten. */
  const LocalStore: new (continueExceeding: boolean, exponentialBackoff: boolean, cache?: number) => FastifyRateLimitStore;
  export default LocalStore;
}

declare module '@fastify/rate-limit/store/RedisStore.js' {
  import type { FastifyRateLimitStore } from '@fastify/rate-limit';
  import type { Redis } from 'ioredis';

  /** A fixed window per key in Redis, each key prefixed with `key`. */
  const RedisStore: new (continueExceeding: boolean, exponentialBackoff: boolean, redis: Redis, key?: string) => FastifyRateLimitStore;
  export default RedisStore;
}
