import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { AuthContext } from '../auth/guard.js';
import { Problem } from '../web/problem.js';

export type ApiInstance = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the management guard on every /v1 request that passed it. */
    auth: AuthContext | null;
    /**
     * On a route whose handler checks the auth version itself (`authVersionCheckedByHandler`): the
     * guard's steps 8–14 again, on keys read afresh; throws the refusal.
     */
    recheckAuth: (() => Promise<AuthContext>) | null;
  }
  interface FastifyContextConfig {
    /**
     * The route's own read returns the auth version, and the handler compares it with the version the
     * guard judged the keys under before acting (ManagementGuard.check): read-only routes only.
     */
    authVersionCheckedByHandler?: boolean;
  }
}

/** The guard ran before any handler; a handler without its result is a wiring mistake, not a client error. */
export function authOf(request: FastifyRequest): AuthContext {
  if (!request.auth) throw new Problem('internal_error', 'The request reached a handler without authentication.');
  return request.auth;
}
