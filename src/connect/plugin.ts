/**
 * The end users' pages as one area: the hosted form and the Connect page under /connect and the OAuth callback under
 * /oauth. Every error and every unknown path under either prefix is a plain page with the end users'
 * page headers, never problem+json: a browser shows it to a person.
 */
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../services/context.js';
import { setPageHeaders } from '../web/page-headers.js';
import type { AreaErrors } from '../web/pre-routing.js';
import type { Problem } from '../web/problem.js';
import { answerErrors, UNAVAILABLE_PAGE } from '../web/problem-answers.js';
import { registerConnectPageRoutes } from './connect-page-routes.js';
import { errorPage } from './form-page.js';
import { registerFormRoutes } from './form-routes.js';
import { registerOAuthCallback } from './oauth-callback.js';

const page = (problem: Problem) =>
  problem.code === 'database_unavailable'
    ? errorPage(problem.status, UNAVAILABLE_PAGE.title, UNAVAILABLE_PAGE.text)
    : errorPage(problem.status, 'Something went wrong', problem.detail);

export const connectErrors: AreaErrors = {
  respond: (_request, reply, problem) => {
    setPageHeaders(reply);
    // The problem's own headers (Retry-After on a 503) belong to the page as much as to problem+json.
    return reply.code(problem.status).headers(problem.headers).send(page(problem));
  },
  page,
};

export async function connectPlugin(app: FastifyInstance, options: { ctx: ServiceContext }) {
  // A not-found handler belongs to one prefix, so each of the two gets the area's handlers.
  await app.register(
    async (scope) => {
      answerErrors(scope, connectErrors.respond);
      await registerFormRoutes(scope, options.ctx);
      // The Connect page (CONTRACT 10), on the same scope: it shares the hosted form's form parser.
      registerConnectPageRoutes(scope, options.ctx);
    },
    { prefix: '/connect' },
  );
  await app.register(
    async (scope) => {
      answerErrors(scope, connectErrors.respond);
      registerOAuthCallback(scope, options.ctx);
    },
    { prefix: '/oauth' },
  );
}
