/**
 * The route label of keyward_http_requests_total and keyward_http_request_duration_seconds, which
 * the app's one onResponse hook (app.ts) counts beside its log line (a proxied call's line is api/proxy.ts's; the count is still here).
 */
import type { FastifyRequest } from 'fastify';

/** The route label of a request no route matched (a 404): a fixed value, never the path it asked for. */
export const UNMATCHED_ROUTE = 'unmatched';

/** The matched route's pattern; a request answered by a not-found handler (whose pattern, where it has one, is a catch-all) is UNMATCHED_ROUTE. */
export function metricsRoute(request: FastifyRequest): string {
  return request.is404 ? UNMATCHED_ROUTE : (request.routeOptions.url ?? UNMATCHED_ROUTE);
}
