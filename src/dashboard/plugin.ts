/**
 * The dashboard, served by Keyward itself under /dashboard. Public pages (sign-in, sign-up) first;
 * every other page sits behind one preHandler that opens the session from its cookie and, on a POST,
 * checks the form's CSRF token against the session. Handlers read both from `pageContext(request)`.
 * Every error and unknown path under /dashboard is the dashboard's own error page.
 */
import formbody from '@fastify/formbody';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { sameText } from '../primitives/digest.js';
import type { ServiceContext } from '../services/context.js';
import { mayDo } from '../services/team/roles.js';
import { newFormNonce } from '../services/users/dashboard-forms.js';
import { endSession, openSession } from '../services/users/sessions.js';
import { readCookie } from '../web/cookies.js';
import { formText } from '../web/form-fields.js';
import type { AreaErrors } from '../web/pre-routing.js';
import { answerErrors } from '../web/problem-answers.js';
import { clearedSessionCookie, HOME, registerAuthRoutes, SESSION_COOKIE, sessionCookiesOf } from './auth-routes.js';
import { readRefusal } from './domain-errors.js';
import { registerJoinRoutes } from './join-routes.js';
import { sendPage } from './layout.js';
import { errorPage, formExpiredPage, type PageContext, roleRefusedPage } from './layout-views.js';
import { registerMfaPages } from './mfa-pages.js';
import { registerSecondStepRoutes } from './mfa-routes.js';
import { routeAction } from './route-actions.js';
import { registerSsoPages } from './sso-pages.js';
import { registerSsoRoutes } from './sso-routes.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set on every signed-in dashboard request. */
    dashboard: PageContext | null;
  }
}

/** A page registrar: one file per group of pages, given the signed-in scope. */
export type PageRoutes = (scope: FastifyInstance, ctx: ServiceContext) => void;

export function pageContext(request: FastifyRequest): PageContext {
  if (!request.dashboard) throw new Error('a dashboard page was reached without a session');
  return request.dashboard;
}

/** The page an error shows (never a stack or the problem's internals), with the dashboard's page headers. */
export const dashboardErrors: AreaErrors = {
  // The problem's own headers (Retry-After on a 503) belong to the page as much as to problem+json.
  respond: (_request, reply, problem) => sendPage(reply.headers(problem.headers), errorPage(problem.status), problem.status),
  page: (problem) => errorPage(problem.status),
};

export interface DashboardOptions {
  ctx: ServiceContext;
  passwordChecksPerMinute: number;
  pages: PageRoutes[];
}

/** Registered under the /dashboard prefix. */
export async function dashboardPlugin(scope: FastifyInstance, options: DashboardOptions) {
  const { ctx } = options;
  const cookies = sessionCookiesOf(ctx);
  answerErrors(scope, dashboardErrors.respond, readRefusal);
  await scope.register(formbody);
  scope.decorateRequest('dashboard', null);
  registerAuthRoutes(scope, ctx, { ...cookies, passwordChecksPerMinute: options.passwordChecksPerMinute });
  // The one-time code after a right password: public too, no session exists until the code is accepted.
  registerSecondStepRoutes(scope, ctx, cookies);
  // An invitation's link: public too, the invited person has no session yet.
  registerJoinRoutes(scope, ctx, { ...cookies, passwordChecksPerMinute: options.passwordChecksPerMinute });
  // "Sign in with SSO" and the identity provider's redirect back: public, like sign-in.
  registerSsoRoutes(scope, ctx, { ...cookies, passwordChecksPerMinute: options.passwordChecksPerMinute });

  await scope.register(async (signedIn) => {
    // A route the table does not name would be open to every role: it is not registered at all.
    signedIn.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) {
        if (method !== 'HEAD' && routeAction(method, route.url) === undefined)
          throw new Error(`${method} ${route.url} has no action in DASHBOARD_ROUTE_ACTIONS`);
      }
    });
    signedIn.addHook('preHandler', async (request, reply) => {
      const token = readCookie(request.headers.cookie, SESSION_COOKIE);
      // Read on every request, with the user's role: a removal or a demotion counts from the next one, on every node.
      const user = token ? await openSession(ctx, token, { userAgent: request.headers['user-agent'], address: request.ip }) : null;
      if (!user) return reply.redirect('/dashboard/sign-in', 303);
      const csrf = ctx.vault.mac(`dashboard-csrf|${user.sessionId}`);
      if (request.method === 'POST' && !sameText(formText(request.body, 'csrf'), csrf)) {
        return sendPage(reply, formExpiredPage(), 403);
      }
      const action = routeAction(request.method === 'HEAD' ? 'GET' : request.method, request.routeOptions.url ?? '');
      // Judged before the handler runs: before any confirmation page, and before any rule of the change itself.
      if (!action || !mayDo(user.role, action)) return sendPage(reply, roleRefusedPage(user.role), 403);
      request.dashboard = { user, csrf, once: newFormNonce() };
    });
    signedIn.get('/', async (_request, reply) => reply.redirect(HOME, 303));
    signedIn.post('/sign-out', async (request, reply) => {
      await endSession(ctx, readCookie(request.headers.cookie, SESSION_COOKIE)!);
      return reply.header('set-cookie', clearedSessionCookie(cookies)).redirect('/dashboard/sign-in', 303);
    });
    for (const register of options.pages) register(signedIn, ctx);
    // Team → "Single sign-on".
    registerSsoPages(signedIn, ctx);
    // Security → "One-time codes", and Team → "Require MFA".
    registerMfaPages(signedIn, ctx);
  });
}
