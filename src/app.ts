/**
 * buildApp: the one composition root. The server itself (request ids, one log line a request, the
 * validator, errors that come before any route), the OpenAPI document, probes and assets; then each
 * area as its own plugin under its own prefix, answering its own errors: the management API under
 * /v1 (problem+json), the end users' pages under /connect and /oauth, the dashboard under /dashboard.
 * Nothing imports this file but the process that serves it and the tests: no listening, no globals.
 */
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type TObject, Type } from '@sinclair/typebox';
import Fastify, { type FastifyBaseLogger, LogController } from 'fastify';
import { type GuardHook, managementGuard } from './api/guard-hook.js';
import { apiPlugin } from './api/plugin.js';
import { DEFAULT_PROXY_LIMITS, type ProxyLimits } from './api/proxy.js';
import { DOCUMENTED_SCHEMAS, WEBHOOKS } from './api/webhook-event-schemas.js';
import { connectErrors, connectPlugin } from './connect/plugin.js';
import { DASHBOARD_PAGES } from './dashboard/pages.js';
import { dashboardErrors, dashboardPlugin } from './dashboard/plugin.js';
import { metricsRoute, UNMATCHED_ROUTE } from './metrics/http-metrics.js';
import type { Metrics } from './metrics/metrics.js';
import { requestLoggerFactory } from './primitives/logger.js';
import type { ServiceContext } from './services/context.js';
import { ARRIVAL_LIMITS } from './web/arrival-limits.js';
import { registerAssets } from './web/assets.js';
import { registerBrandingRoutes } from './web/branding-routes.js';
import { answerConnectMethod } from './web/connect-method.js';
import { registerHealth } from './web/health.js';
import { PAGE_HEADERS } from './web/page-headers.js';
import { preRoutingHandlers, requestIdFor } from './web/pre-routing.js';
import { answerErrors, PROBLEM_JSON_ERRORS, respondWithProblem } from './web/problem-answers.js';
import { requestLineFields } from './web/request-line.js';
import { validatorCompiler } from './web/validation.js';

export interface AppOptions {
  ctx: ServiceContext;
  logger: FastifyBaseLogger;
  rateLimitPerMinute: number;
  authFailureLimitPerMinute: number;
  trustProxy?: boolean | string[];
  /** The node's metrics (KEYWARD_METRICS_PORT); without them no request is counted. */
  metrics?: Metrics;
  /** The gateway's limits (CONTRACT 5); the contract's defaults unless given. */
  proxy?: ProxyLimits;
}

/** One route as the router holds it: `GET /v1/end-users/:externalUserId`. */
export interface RouteEntry {
  method: string;
  url: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * Whether the handler writes the request's one log line itself, with what only it knows (the
     * gateway's proxied call, CONTRACT 8.1), in place of the line written in onResponse below. The
     * handler's to set, not the route's: a request refused before its handler ran (a key, the rate
     * limit, a path parameter) gets the usual line.
     */
    writesOwnLogLine: boolean;
  }
  interface FastifyInstance {
    /**
     * Every route the app registered, in order. The auth matrix reads its /v1 routes from here, so a
     * new route cannot miss the guard's tests.
     */
    routeTable: readonly RouteEntry[];
  }
}

export const BODY_LIMIT = 64 * 1024;

export async function buildApp(options: AppOptions) {
  const { ctx } = options;
  const guard: GuardHook = managementGuard(ctx, { perKey: options.rateLimitPerMinute, failuresPerAddress: options.authFailureLimitPerMinute });
  // Before routing there is no plugin yet: the target's first path segment picks the area that answers.
  const preRouting = preRoutingHandlers({
    guard,
    // Outside every area (probes, assets, the OpenAPI document, unknown paths): problem+json, as under /v1.
    areas: { api: PROBLEM_JSON_ERRORS, pages: connectErrors, dashboard: dashboardErrors, other: PROBLEM_JSON_ERRORS },
    pageHeaders: PAGE_HEADERS,
    logger: options.logger,
  });
  const app = Fastify({
    loggerInstance: options.logger,
    bodyLimit: BODY_LIMIT,
    // How long a request may take to arrive, headers and body, and a connection to sit idle.
    ...ARRIVAL_LIMITS,
    trustProxy: options.trustProxy ?? false,
    // An externalUserId of 255 characters, each up to 12 characters once percent-encoded.
    routerOptions: { maxParamLength: 4096 },
    // Fastify's own two lines a request are replaced by the one written in onResponse below (a proxied call's: api/proxy.ts).
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    childLoggerFactory: requestLoggerFactory,
    genReqId: (request) => requestIdFor(request.headers),
    frameworkErrors: preRouting.frameworkErrors,
    clientErrorHandler: preRouting.clientErrorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.server.on(
    'connect',
    answerConnectMethod(options.logger, (statusCode) => options.metrics?.request(UNMATCHED_ROUTE, 'CONNECT', statusCode, 0)),
  );

  const routeTable: RouteEntry[] = [];
  app.decorate('routeTable', routeTable);
  // HEAD is left out: no route declares it, Fastify adds one beside each GET.
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) if (method !== 'HEAD') routeTable.push({ method, url: route.url });
  });

  app.setValidatorCompiler(validatorCompiler);
  answerErrors(app, respondWithProblem);

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  // Node's own check is off (web/arrival-limits.ts): an HTTP/1.1 request without Host is refused here.
  app.addHook('onRequest', preRouting.hostRequired);
  // One line a request, naming the route pattern and never the path itself: paths carry form tokens
  // and end users' ids; and, where the node has metrics, the request counted in the same hook. Before
  // any area's plugin: a plugin inherits only the hooks registered before it.
  const { metrics } = options;
  app.addHook('onResponse', async (request, reply) => {
    // Through the root logger, with request.log's binding first: the same line, and no child made for it (logger.ts).
    if (!request.writesOwnLogLine) options.logger.info(requestLineFields(request, reply, reply.statusCode), 'request');
    metrics?.request(metricsRoute(request), request.method, reply.statusCode, reply.elapsedTime / 1000);
  });
  // The guard also runs before routing (web/pre-routing.ts), on a request of the root, so its
  // decorations live here rather than in the API's scope.
  app.decorateRequest('auth', null);
  app.decorateRequest('writesOwnLogLine', false);
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
        schemas: DOCUMENTED_SCHEMAS,
      },
      security: [{ accountKey: [], serverKey: [] }],
      webhooks: WEBHOOKS,
    },
    // Only the management API is documented; pages and probes are not part of it.
    hideUntagged: true,
    // A route's trailing wildcard (the gateway's proxied path) is documented as the `{path}` parameter it is.
    transform: ({ schema, url }) => {
      if (!url.endsWith('/*')) return { schema, url };
      const params = schema.params as TObject;
      const path = Type.String({ description: "Appended to the provider's API base URL as sent (percent-encoded), with the query string." });
      return { schema: { ...schema, params: Type.Object({ ...params.properties, path }) }, url: `${url.slice(0, -2)}/{path}` };
    },
  });

  await app.register(apiPlugin, { prefix: '/v1', ctx, guard, proxy: options.proxy ?? DEFAULT_PROXY_LIMITS });
  await app.register(connectPlugin, { ctx });
  await app.register(dashboardPlugin, {
    prefix: '/dashboard',
    ctx,
    passwordChecksPerMinute: options.authFailureLimitPerMinute,
    pages: DASHBOARD_PAGES,
  });
  app.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/dashboard', 303));
  registerAssets(app);
  registerBrandingRoutes(app, ctx);
  registerHealth(app, ctx);
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  return app;
}
