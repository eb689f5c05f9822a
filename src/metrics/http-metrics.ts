/**
 * keyward_http_requests_total and keyward_http_request_duration_seconds, counted in one onResponse
 * hook. Registered on the root instance before any area's plugin, since a Fastify plugin inherits
 * only the hooks its parent had when it was registered.
 */
import type { FastifyInstance } from 'fastify';
import type { Metrics } from './metrics.js';

/** The route label of a request no route matched (a 404): a fixed value, never the path it asked for. */
export const UNMATCHED_ROUTE = 'unmatched';

export function registerHttpMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', async (request, reply) => {
    // Answered by a not-found handler: its pattern, where it has one, is a catch-all, not a route.
    const route = request.is404 ? UNMATCHED_ROUTE : (request.routeOptions.url ?? UNMATCHED_ROUTE);
    metrics.request(route, request.method, reply.statusCode, reply.elapsedTime / 1000);
  });
}
