/**
 * The fields of a request's one log line (app.ts's onResponse, or the handler that writes the line
 * itself: the gateway's proxied call), in one place so that every request line carries the same ones.
 * The route pattern, never the path: paths carry form tokens and end users' ids.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

export function requestLineFields(request: FastifyRequest, reply: FastifyReply, statusCode: number | null) {
  return { reqId: request.id, method: request.method, route: request.routeOptions.url ?? '(no route)', statusCode, ms: Math.round(reply.elapsedTime) };
}
