import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../services/context.js';

/** GET /healthz: 200 when the database answers, 503 when it does not. No keys needed, nothing secret. */
export function registerHealth(app: FastifyInstance, ctx: ServiceContext) {
  app.get('/healthz', { schema: { hide: true } }, async (_request, reply) => {
    try {
      await ctx.store.maintenance.ping();
      return reply.send({ status: 'ok', database: ctx.store.engine });
    } catch {
      return reply.code(503).send({ status: 'unavailable', database: ctx.store.engine });
    }
  });
}
