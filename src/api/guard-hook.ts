/**
 * The management guard as a hook. It is installed on the /v1 plugin itself (its routes and its
 * not-found handler), so what counts as the management API is what the router matched, not how the
 * raw URL was spelled: `/%761/end-users` reaches the same route and meets the same guard. Unknown
 * /v1 paths are guarded too (a caller without keys learns nothing about which routes exist), and the
 * rate limit is announced on every response there.
 */
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { ManagementGuard } from '../auth/guard.js';
import { KeyQuota } from '../auth/key-quota.js';
import { AddressLimit } from '../auth/rate-limit.js';
import type { ServiceContext } from '../services/context.js';
import { Problem } from '../web/problem.js';

export interface GuardHook {
  (request: FastifyRequest, reply: FastifyReply): Promise<void>;
  /**
   * For a route whose own first statement returns the auth version (GET /v1/end-users/{id}, the proxy): the
   * guard judges the keys under the last version this node saw, without a statement of its own, and
   * the handler calls `confirm` with the version its read returned before it acts. `url` is the
   * route as the router names it (with the /v1 prefix); `methods` those whose handler reads the version
   * (GET unless told: the proxy's every method does); other methods on that URL are judged as usual.
   */
  leaveVersionToHandler(url: string, methods?: readonly string[]): void;
  /**
   * Where the version the handler's read returned differs from the one the keys were judged under,
   * the guard's steps 8–14 again, on keys read afresh; throws the refusal, counted per address like
   * any failed authentication.
   */
  confirm(request: FastifyRequest, authVersion: string): Promise<void>;
  /** Gives back this node's unspent rate-limit leases, so other nodes can use them (the app's onClose). */
  close(log: FastifyBaseLogger): Promise<void>;
}

export function managementGuard(ctx: ServiceContext, limits: { perKey: number; failuresPerAddress: number }): GuardHook {
  const keyLimits = new KeyQuota(ctx.store.rateLimits, ctx.clock, limits.perKey);
  const failures = new AddressLimit(limits.failuresPerAddress);
  const guard = new ManagementGuard(ctx, keyLimits);
  const policy = `"default";q=${limits.perKey};w=60`;
  const versionReadByHandler = new Set<string>();
  const presentedOf = (request: FastifyRequest) => ({ method: request.method, headers: request.headers, rawHeaders: request.raw.rawHeaders });

  const hook = async (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('ratelimit-policy', policy);
    try {
      const presented = presentedOf(request);
      const byHandler = versionReadByHandler.has(`${request.method === 'HEAD' ? 'GET' : request.method} ${request.routeOptions.url}`);
      const { auth, rateLimit } =
        (byHandler && guard.admitFromMemory(presented)) || (await guard.check(presented, { authVersion: byHandler ? 'by-handler' : 'here' }));
      request.auth = auth;
      reply.header('ratelimit', `"default";r=${rateLimit.remaining};t=${rateLimit.resetSeconds}`);
    } catch (error) {
      if (!(error instanceof Problem)) throw error;
      // Every other refusal, step 1's included (an Origin, or OPTIONS), is a failed authentication.
      if (error.code === 'rate_limited') {
        reply.header('ratelimit', `"default";r=0;t=${error.headers['retry-after']}`);
        throw told(error);
      }
      throw told(countedFailure(request, error));
    }
  };

  /** A refusal as answered (after the per-address limit had its say), told to the observer (the metrics). */
  const told = (refusal: unknown): unknown => {
    if (refusal instanceof Problem) ctx.observer?.authFailure(refusal.code);
    return refusal;
  };

  /**
   * Failed authentications are counted per address; past the limit they are answered with 429
   * instead. A request that passes the guard is never held back by this count.
   */
  const countedFailure = (request: FastifyRequest, refusal: unknown): unknown => {
    if (!(refusal instanceof Problem)) return refusal;
    const state = failures.hit(request.ip, ctx.clock.now().getTime());
    if (!state.limited) return refusal;
    return new Problem('rate_limited', `Too many failed authentications from this address. Retry after ${state.resetSeconds} seconds.`, {
      headers: { 'retry-after': String(state.resetSeconds) },
    });
  };

  const confirm = async (request: FastifyRequest, authVersion: string) => {
    if (authVersion === request.auth?.authVersion) return;
    try {
      // The fresh judgement is the request's from here on: what it says of the server (write-only or
      // not) is as of the version the read returned.
      request.auth = await guard.recheck(presentedOf(request));
    } catch (refusal) {
      // A refusal here is a failed authentication like any other: counted per address.
      throw told(countedFailure(request, refusal));
    }
  };

  // By method and route: a write sharing the read's URL (DELETE /v1/end-users/{id}) reads the
  // version here, as every route but the read does. HEAD is GET's (Fastify answers it with GET's handler).
  const leaveVersionToHandler = (url: string, methods: readonly string[] = ['GET']) => {
    for (const method of methods) versionReadByHandler.add(`${method} ${url}`);
  };

  const close = async (log: FastifyBaseLogger) => {
    try {
      const returned = await keyLimits.close();
      if (returned > 0) log.info({ returned }, 'unspent rate-limit leases given back');
    } catch (error) {
      // Not fatal: what this node held is lost to the key until its window ends, as if it had died.
      // The message only: pino's err serializer would add the cause's, which may name the database's host.
      log.warn({ err: { message: (error as Error).message } }, 'could not give back unspent rate-limit leases');
    }
  };
  return Object.assign(hook, { leaveVersionToHandler, confirm, close });
}
