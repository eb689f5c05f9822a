/**
 * Puts the management guard in front of everything under /v1, unknown paths included (a caller
 * without keys learns nothing about which routes exist), and announces the rate limit on every
 * response there.
 */
import type { FastifyInstance } from 'fastify';
import { ManagementGuard } from '../auth/guard.js';
import { WindowCounter } from '../auth/rate-limit.js';
import { Problem } from '../errors.js';
import type { ServiceContext } from '../services/context.js';

export function isManagementPath(url: string): boolean {
  return url === '/v1' || url.startsWith('/v1/') || url.startsWith('/v1?');
}

export function installManagementGuard(app: FastifyInstance, ctx: ServiceContext, limits: { perKey: number; failuresPerAddress: number }) {
  const keyLimits = new WindowCounter(limits.perKey);
  const failures = new WindowCounter(limits.failuresPerAddress);
  const guard = new ManagementGuard(ctx, keyLimits);
  const policy = `"default";q=${limits.perKey};w=60`;
  app.decorateRequest('auth', null);

  app.addHook('onRequest', async (request, reply) => {
    if (!isManagementPath(request.url)) return;
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
  });
}
