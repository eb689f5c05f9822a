/**
 * The management guard as a hook. It is installed on the /v1 plugin itself (its routes and its
 * not-found handler), so what counts as the management API is what the router matched, not how the
 * raw URL was spelled: `/%761/end-users` reaches the same route and meets the same guard. Unknown
 * /v1 paths are guarded too (a caller without keys learns nothing about which routes exist), and the
 * rate limit is announced on every response there.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ManagementGuard } from '../auth/guard.js';
import { WindowCounter } from '../auth/rate-limit.js';
import { Problem } from '../errors.js';
import type { ServiceContext } from '../services/context.js';

export type GuardHook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

export function managementGuard(ctx: ServiceContext, limits: { perKey: number; failuresPerAddress: number }): GuardHook {
  const keyLimits = new WindowCounter(limits.perKey);
  const failures = new WindowCounter(limits.failuresPerAddress);
  const guard = new ManagementGuard(ctx, keyLimits);
  const policy = `"default";q=${limits.perKey};w=60`;

  return async (request, reply) => {
    reply.header('ratelimit-policy', policy);
    try {
      const { auth, rateLimit } = await guard.check({ method: request.method, headers: request.headers, rawHeaders: request.raw.rawHeaders });
      request.auth = auth;
      reply.header('ratelimit', `"default";r=${rateLimit.remaining};t=${rateLimit.resetSeconds}`);
    } catch (error) {
      if (!(error instanceof Problem) || error.code === 'browser_access_forbidden') throw error;
      if (error.code === 'rate_limited') {
        reply.header('ratelimit', `"default";r=0;t=${error.headers['retry-after']}`);
        throw error;
      }
      // Failed authentications are counted per address; past the limit they are answered with 429
      // instead. A request that passes the guard is never held back by this count.
      const state = failures.hit(request.ip, ctx.clock.now().getTime());
      if (state.limited) {
        throw new Problem('rate_limited', `Too many failed authentications from this address. Retry after ${state.resetSeconds} seconds.`, {
          headers: { 'retry-after': String(state.resetSeconds) },
        });
      }
      throw error;
    }
  };
}
