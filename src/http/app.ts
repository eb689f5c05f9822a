/** buildApp: plugins, routes and the one error handler. No listening, no globals: tests build their own. */
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';
import { registerConnectStatic } from '../api/connect-static.js';
import { registerDeleteEndUser } from '../api/delete-end-user.js';
import { registerGetEndUser } from '../api/get-end-user.js';
import { managementGuard, type GuardHook } from '../api/guard-hook.js';
import { registerListEndUsers } from '../api/list-end-users.js';
import { registerOAuthStart } from '../api/oauth-start.js';
import { errorPage } from '../connect/form-page.js';
import { PAGE_HEADERS, registerFormRoutes, setPageHeaders } from '../connect/form-routes.js';
import { registerOAuthCallback } from '../connect/oauth-callback.js';
import { errorPage as dashboardErrorPage, sendPage } from '../dashboard/layout.js';
import { DASHBOARD_PAGES } from '../dashboard/pages.js';
import { registerDashboard } from '../dashboard/plugin.js';
import { Problem } from '../errors.js';
import { mentionsKey } from '../keys/format.js';
import type { ServiceContext } from '../services/context.js';
import { registerAssets } from './assets.js';
import { registerHealth } from './health.js';
import { areaOf, newRequestId, preRoutingHandlers, type Area } from './pre-routing.js';
import { registerProblemHandlers, routeNotFound, sendProblem } from './problems.js';
import { checkQueryEncoding, validatorCompiler } from './validation.js';

export interface AppOptions {
  ctx: ServiceContext;
  logger: FastifyBaseLogger;
  rateLimitPerMinute: number;
  authFailureLimitPerMinute: number;
  trustProxy?: boolean | string[];
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;
export const BODY_LIMIT = 64 * 1024;

/** The plain error page of the end users' and members' pages; null where a problem+json answers. */
function errorPageOf(area: Area, problem: Problem): string | null {
  if (area === 'dashboard') return dashboardErrorPage(problem.status);
  if (area === 'pages') return errorPage(problem.status, 'Something went wrong', problem.detail);
  return null;
}

export async function buildApp(options: AppOptions) {
  const { ctx } = options;
  const guard: GuardHook = managementGuard(ctx, { perKey: options.rateLimitPerMinute, failuresPerAddress: options.authFailureLimitPerMinute });
  const renderHtml = (request: FastifyRequest, reply: FastifyReply, problem: Problem) => {
    // The matched route decides where one exists; an unmatched request goes by its first path segment.
    const area = areaOf(request.routeOptions.url ?? request.url);
    const page = errorPageOf(area, problem);
    if (page === null) return null;
    if (area === 'dashboard') return sendPage(reply, page, problem.status);
    setPageHeaders(reply);
    return reply.code(problem.status).send(page);
  };
  const preRouting = preRoutingHandlers({
    guard,
    render: (request, reply, problem) => renderHtml(request, reply, problem) ?? sendProblem(reply, problem, request.id),
    page: errorPageOf,
    pageHeaders: PAGE_HEADERS,
    logger: options.logger,
  });
  const app = Fastify({
    loggerInstance: options.logger,
    bodyLimit: BODY_LIMIT,
    trustProxy: options.trustProxy ?? false,
    // An externalUserId of 255 characters, each up to 12 characters once percent-encoded.
    routerOptions: { maxParamLength: 4096 },
    // Fastify's own two lines a request are replaced by the one written in onResponse below.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      // A key pasted into the wrong header would otherwise be echoed back and logged.
      const usable = typeof given === 'string' && REQUEST_ID.test(given) && !mentionsKey(given);
      return usable ? given : newRequestId();
    },
    frameworkErrors: preRouting.frameworkErrors,
    clientErrorHandler: preRouting.clientErrorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  registerProblemHandlers(app, renderHtml);

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  // One line a request, naming the route pattern and never the path itself: paths carry form tokens
  // and end users' ids.
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      { method: request.method, route: request.routeOptions.url ?? '(no route)', statusCode: reply.statusCode, ms: Math.round(reply.elapsedTime) },
      'request',
    );
  });
  app.decorateRequest('auth', null);
  app.decorateRequest('recheckAuth', null);
  // A node that stops gives back the rate-limit quota it leased and did not spend.
  app.addHook('onClose', async (instance) => guard.close(instance.log));

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Keyward management API', version: '1.0.0', description: 'Every /v1 route needs both keys.' },
      components: {
        securitySchemes: {
          accountKey: { type: 'http', scheme: 'bearer', description: 'Account API key: service_acct_…' },
          serverKey: { type: 'apiKey', in: 'header', name: 'x-service-key', description: 'Server API key: service_srv_…' },
        },
      },
      security: [{ accountKey: [], serverKey: [] }],
    },
    // Only the management API is documented; pages and probes are not part of it.
    hideUntagged: true,
  });

  await app.register(
    async (v1) => {
      // Management bodies are JSON only: text/plain, which Fastify reads by default, gets a 415.
      v1.removeContentTypeParser('text/plain');
      // The guard belongs to what the router matched under /v1, however the path was spelled, and to
      // this prefix's not-found handler, so unknown /v1 paths are guarded too.
      v1.addHook('onRequest', guard);
      v1.addHook('preValidation', async (request) => checkQueryEncoding(request.url));
      v1.setNotFoundHandler((request, reply) => sendProblem(reply, routeNotFound(request.method), request.id));
      registerOAuthStart(v1, ctx);
      registerConnectStatic(v1, ctx);
      registerListEndUsers(v1, ctx);
      registerGetEndUser(v1, ctx);
      registerDeleteEndUser(v1, ctx);
    },
    { prefix: '/v1' },
  );

  registerFormRoutes(app, ctx);
  registerOAuthCallback(app, ctx);
  registerDashboard(app, ctx, { passwordChecksPerMinute: options.authFailureLimitPerMinute, pages: DASHBOARD_PAGES });
  registerAssets(app);
  registerHealth(app, ctx);
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  return app;
}

