/**
 * The management API as one plugin, registered under /v1: the guard on every route and on the
 * prefix's not-found handler (so what counts as the API is what the router matched, and an unknown
 * /v1 path is guarded too), JSON bodies only, and every error as problem+json (CONTRACT 2.2).
 */
import type { FastifyError, FastifyRequest } from 'fastify';
import type { ServiceContext } from '../services/context.js';
import { DomainError } from '../services/domain-error.js';
import type { Problem } from '../web/problem.js';
import { answerErrors, respondWithProblem } from '../web/problem-answers.js';
import { checkQueryEncoding } from '../web/validation.js';
import type { ApiInstance } from './api-instance.js';
import { registerConnectSessions } from './connect-sessions.js';
import { registerConnectStatic } from './connect-static.js';
import { registerDeleteEndUser } from './delete-end-user.js';
import { problemOf } from './domain-problem.js';
import { registerGetEndUser } from './get-end-user.js';
import type { GuardHook } from './guard-hook.js';
import { registerListEndUsers } from './list-end-users.js';
import { registerOAuthStart } from './oauth-start.js';
import { registerPatchEndUser } from './patch-end-user.js';
import { PROXY_ROUTE, type ProxyLimits, registerProxy } from './proxy.js';
import { registerVerifyEndUser } from './verify-end-user.js';

/**
 * A service's refusal, in the contract's codes (domain-problem.ts); its field is reported under /query
 * when the request's query string carried it, else under /body. Null lets every other error through.
 */
function serviceRefusal(error: FastifyError, request: FastifyRequest): Problem | null {
  if (!(error instanceof DomainError)) return null;
  const { query } = request;
  const inQuery = error.field !== undefined && typeof query === 'object' && query !== null && Object.hasOwn(query, error.field);
  return problemOf(error, inQuery ? 'query' : 'body');
}

export async function apiPlugin(v1: ApiInstance, options: { ctx: ServiceContext; guard: GuardHook; proxy: ProxyLimits }) {
  const { ctx } = options;
  // Management bodies are JSON only: text/plain, which Fastify reads by default, gets a 415.
  v1.removeContentTypeParser('text/plain');
  v1.addHook('onRequest', options.guard);
  // A proxied call's query is the provider's, passed on as sent (CONTRACT 8.1): not Keyward's to judge.
  const proxied = `${v1.prefix}${PROXY_ROUTE}`;
  v1.addHook('preValidation', async (request) => {
    if (!request.routeOptions.url?.startsWith(proxied)) checkQueryEncoding(request.url);
  });
  answerErrors(v1, respondWithProblem, serviceRefusal);
  registerOAuthStart(v1, ctx);
  registerConnectStatic(v1, ctx);
  registerConnectSessions(v1, ctx);
  registerListEndUsers(v1, ctx);
  registerGetEndUser(v1, ctx, options.guard);
  registerDeleteEndUser(v1, ctx);
  registerPatchEndUser(v1, ctx);
  registerVerifyEndUser(v1, ctx);
  registerProxy(v1, ctx, options.guard, options.proxy);
}
