/** The 201 of either POST route, with `Idempotency-Key` replay (CONTRACT 2.2) when the header is sent. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServiceContext } from '../services/context.js';
import { requestHash, runIdempotent } from '../services/idempotency/idempotency.js';
import { authOf } from './api-instance.js';

/** `operation` names the route and its path parameter, so one key reused on another route is a mismatch. */
export async function sendCreated<T>(ctx: ServiceContext, request: FastifyRequest, reply: FastifyReply, operation: string, create: () => Promise<T>) {
  const key = request.headers['idempotency-key'];
  if (typeof key !== 'string') return reply.code(201).send(await create());
  const hash = requestHash(operation, request.body);
  const result = await runIdempotent(ctx, { serverId: authOf(request).serverId, key, hash }, async () => ({ statusCode: 201, body: await create() }));
  if (result.replayed) reply.header('idempotent-replayed', 'true');
  return reply.code(201).send(result.body as T);
}
