/**
 * Single sign-on's public routes (CONTRACT 9), outside the signed-in scope: "Sign in with SSO" (GET
 * and POST /dashboard/sso: the email first, whose domain picks the account's provider), "Join with
 * SSO" from an invitation's page (POST /dashboard/sso/join) and the provider's redirect back (GET
 * /dashboard/sso/callback), which signs the person in with a new session.
 *
 * The forms are anonymous, so they carry the sign-in form's CSRF token (a MAC of this browser's nonce
 * cookie, auth-routes.ts). Each makes Keyward fetch the provider's discovery document, so both are
 * counted per client address, at the sign-in forms' rate. A domain no account allows gets one
 * sentence, the same for every such domain: the page tells nothing about accounts. The sign-in the
 * callback needs travels in a sealed cookie (services/sso/sso-login.ts says why); the callback clears
 * it whatever the outcome, and any refusal is the dashboard's 400 page with one sentence of Keyward's
 * own, never the provider's error text.
 */
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AddressLimit } from '../auth/rate-limit.js';
import type { ServiceContext } from '../services/context.js';
import { finishSsoSignIn, SSO_LOGIN_SECONDS, type SsoStart, startSsoJoin, startSsoSignIn } from '../services/sso/sso-login.js';
import { endSession, openSession } from '../services/users/sessions.js';
import { cookie, readCookie } from '../web/cookies.js';
import { nonceCookie, nonceMatches } from '../web/nonce-cookie.js';
import { ANON_CSRF_COOKIE, anonymousCsrf, HOME, SESSION_COOKIE, type SessionCookies, sessionCookie, TOO_MANY_FROM_ADDRESS } from './auth-routes.js';
import { expiredAnonymousForm } from './auth-views.js';
import { refusalOf } from './domain-errors.js';
import { Filled, formErrors, formRoute, PublicForm, refuseMalformed, Text } from './form-schemas.js';
import { sendPage } from './layout.js';
import { continueToProviderPage, ssoFailedPage, ssoSignInForm } from './sso-views.js';

/** The sealed sign-in the callback reads: sent to the callback only, and on its way back from the provider (a top-level GET, so Lax). */
export const SSO_COOKIE = 'keyward_sso';
const SSO_COOKIE_PATH = '/dashboard/sso';

export const SsoSignInBody = PublicForm({ email: Filled(320) });
export const SsoJoinBody = PublicForm({ token: Text(64) });

/** The one answer for an email whose domain no account allows (or an account whose provider is gone). */
export const NO_SSO_FOR_DOMAIN = 'Single sign-on is not set up for that email’s domain. Sign in with your password, or ask your administrator.';

export function registerSsoRoutes(scope: FastifyInstance, ctx: ServiceContext, options: SessionCookies & { passwordChecksPerMinute: number }) {
  const fromAddress = new AddressLimit(options.passwordChecksPerMinute);
  const overLimit = (request: FastifyRequest) => fromAddress.hit(request.ip, ctx.clock.now().getTime()).limited;
  const csrfValid = (request: FastifyRequest) => nonceMatches(request, ANON_CSRF_COOKIE, (nonce) => anonymousCsrf(ctx, nonce));
  const ssoCookie = (value: string, maxAge: number) => cookie(SSO_COOKIE, value, { path: SSO_COOKIE_PATH, sameSite: 'Lax', secure: options.secure, maxAge });

  /** Sends the browser on to the provider with the sealed sign-in set, or says why it cannot go. */
  function answerStart(reply: FastifyReply, started: SsoStart, again: (status: number, problem: string) => FastifyReply | Promise<FastifyReply>) {
    if (started.started) {
      // A Refresh, not a redirect: see continueToProviderPage.
      reply.header('set-cookie', ssoCookie(started.cookie, SSO_LOGIN_SECONDS)).header('refresh', `0;url=${started.authorizationUrl}`);
      return sendPage(reply, continueToProviderPage(started.authorizationUrl));
    }
    if (started.reason === 'provider_unavailable')
      return again(502, `Keyward could not reach your identity provider: ${started.detail}. Try again in a moment.`);
    if (started.reason === 'invitation_unusable') {
      return sendPage(
        reply,
        ssoFailedPage('This invitation cannot be used with single sign-on: it is no longer pending, or its account has none. Ask for a new invitation.'),
        400,
      );
    }
    return again(422, NO_SSO_FOR_DOMAIN);
  }

  scope.get('/sso', async (request, reply) => {
    const token = readCookie(request.headers.cookie, SESSION_COOKIE);
    if (token && (await openSession(ctx, token))) return reply.redirect(HOME, 303);
    const nonce = nonceCookie(request, reply, { name: ANON_CSRF_COOKIE, path: '/dashboard', secure: options.secure });
    return sendPage(reply, ssoSignInForm(anonymousCsrf(ctx, nonce), '', {}));
  });

  scope.post<{ Body: Static<typeof SsoSignInBody> }>('/sso', formRoute(SsoSignInBody), async (request, reply) => {
    if (!csrfValid(request)) return sendPage(reply, expiredAnonymousForm(), 403);
    const errors = formErrors(request, { email: 'Enter your email.' });
    const { csrf } = request.body;
    const email = (request.body.email ?? '').trim();
    const again = (status: number, problem?: string, fieldErrors = errors ?? {}) => sendPage(reply, ssoSignInForm(csrf, email, fieldErrors, problem), status);
    if (errors) return again(422);
    if (overLimit(request)) return again(429, TOO_MANY_FROM_ADDRESS);
    let started: SsoStart;
    try {
      started = await startSsoSignIn(ctx, email);
    } catch (error) {
      const refused = refusalOf(error, { email: 'email' });
      return again(refused.status, refused.problem, refused.errors);
    }
    return answerStart(reply, started, (status, problem) => again(status, problem));
  });

  scope.post<{ Body: Static<typeof SsoJoinBody> }>('/sso/join', formRoute(SsoJoinBody), async (request, reply) => {
    if (!csrfValid(request)) return sendPage(reply, expiredAnonymousForm(), 403);
    refuseMalformed(request);
    if (overLimit(request)) return sendPage(reply, ssoFailedPage(TOO_MANY_FROM_ADDRESS), 429);
    const started = await startSsoJoin(ctx, request.body.token ?? '');
    return answerStart(reply, started, (status, problem) => sendPage(reply, ssoFailedPage(problem), status));
  });

  scope.get('/sso/callback', async (request, reply) => {
    // Counted as a password check is: a refused callback is recorded as a failed sign-in (sso-login.ts).
    if (overLimit(request)) return sendPage(reply.header('set-cookie', ssoCookie('', 0)), ssoFailedPage(TOO_MANY_FROM_ADDRESS), 429);
    // Read from the raw URL: a parameter given twice stays twice, for the checks to refuse.
    const query = new URL(request.url, 'http://keyward.invalid').searchParams;
    const outcome = await finishSsoSignIn(ctx, {
      cookie: readCookie(request.headers.cookie, SSO_COOKIE),
      query,
      device: { userAgent: request.headers['user-agent'], address: request.ip },
    });
    const cleared = ssoCookie('', 0);
    if (!outcome.ok) return sendPage(reply.header('set-cookie', cleared), ssoFailedPage(outcome.reason), 400);
    // As sign-in does: a session brought along ends, so no session id chosen before signing in survives it.
    const previous = readCookie(request.headers.cookie, SESSION_COOKIE);
    if (previous) await endSession(ctx, previous);
    return reply.header('set-cookie', [cleared, sessionCookie(outcome.token, options)]).redirect(HOME, 303);
  });
}
