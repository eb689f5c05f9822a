/**
 * An invitation's link (CONTRACT 9), outside the signed-in scope: GET /dashboard/join/{token} asks the
 * invited person for a password ("Join {account}"), and the form's POST joins and signs them in. A
 * used, expired or revoked link is a 410 page, an unknown or malformed one the 404 page; neither
 * names the account or the email.
 *
 * The form is anonymous, so it carries the same CSRF token as sign-in's (a MAC of this browser's nonce
 * cookie, auth-routes.ts), and joining runs scrypt, so it is counted per client address before it runs,
 * at the sign-in forms' rate. The token travels in the form's body, not in the POST's URL. Request log
 * lines name the route's pattern, never the URL, so the token in a GET's path is not logged either.
 */
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AddressLimit } from '../auth/rate-limit.js';
import type { ServiceContext } from '../services/context.js';
import { ssoJoinOffered } from '../services/sso/sso-login.js';
import { type OpenedInvitation, openInvitation } from '../services/team/invitations.js';
import { join } from '../services/team/joining.js';
import { endSession } from '../services/users/sessions.js';
import { readCookie } from '../web/cookies.js';
import { nonceCookie, nonceMatches } from '../web/nonce-cookie.js';
import { ANON_CSRF_COOKIE, anonymousCsrf, HOME, SESSION_COOKIE, type SessionCookies, sessionCookie, TOO_MANY_FROM_ADDRESS } from './auth-routes.js';
import { expiredAnonymousForm } from './auth-views.js';
import { notFoundPage, refusalOf } from './domain-errors.js';
import { formErrors, formRoute, PublicForm, Text } from './form-schemas.js';
import { sendPage } from './layout.js';
import { beginSecondStep } from './second-step-cookie.js';
import { joinWithSsoForm } from './sso-views.js';
import { invitationGonePage, joinPage } from './team-views.js';

// A password is taken as typed: spaces count, so only an empty one is "not entered". Its rules are the service's.
export const JoinBody = PublicForm({ token: Text(64), password: Type.String({ minLength: 1, maxLength: 4096 }) });

type Pending = Extract<OpenedInvitation, { state: 'pending' }>;

export function registerJoinRoutes(scope: FastifyInstance, ctx: ServiceContext, options: SessionCookies & { passwordChecksPerMinute: number }) {
  const fromAddress = new AddressLimit(options.passwordChecksPerMinute);
  const overLimit = (request: FastifyRequest) => fromAddress.hit(request.ip, ctx.clock.now().getTime()).limited;

  /** The pending invitation of the token; any other state ends the request with its page (404 or 410). */
  async function pendingOr(reply: FastifyReply, token: string): Promise<Pending | null> {
    const opened = await openInvitation(ctx, token);
    if (opened.state === 'unknown') throw notFoundPage();
    if (opened.state !== 'pending') {
      await sendPage(reply, invitationGonePage(opened.state), 410);
      return null;
    }
    return opened;
  }

  scope.get<{ Params: { token: string } }>('/join/:token', async (request, reply) => {
    const invitation = await pendingOr(reply, request.params.token);
    if (!invitation) return reply;
    const nonce = nonceCookie(request, reply, { name: ANON_CSRF_COOKIE, path: '/dashboard', secure: options.secure });
    const csrf = anonymousCsrf(ctx, nonce);
    // Where the account has single sign-on, the link may be accepted through it too (CONTRACT 9).
    const sso = (await ssoJoinOffered(ctx, request.params.token)) ? joinWithSsoForm(csrf, request.params.token) : undefined;
    return sendPage(reply, joinPage(csrf, request.params.token, invitation, {}, undefined, sso));
  });

  scope.post<{ Body: Static<typeof JoinBody> }>('/join', formRoute(JoinBody), async (request, reply) => {
    if (!nonceMatches(request, ANON_CSRF_COOKIE, (nonce) => anonymousCsrf(ctx, nonce))) return sendPage(reply, expiredAnonymousForm(), 403);
    const errors = formErrors(request, { password: 'Choose a password.' });
    const { csrf } = request.body;
    const token = request.body.token ?? '';
    const invitation = await pendingOr(reply, token);
    if (!invitation) return reply;
    const again = (status: number, fieldErrors = errors ?? {}, problem?: string) =>
      sendPage(reply, joinPage(csrf, token, invitation, fieldErrors, problem), status);
    if (errors) return again(422);
    if (overLimit(request)) return again(429, {}, TOO_MANY_FROM_ADDRESS);
    let joined: Awaited<ReturnType<typeof join>>;
    try {
      joined = await join(ctx, { token, password: request.body.password, device: { userAgent: request.headers['user-agent'], address: request.ip } });
    } catch (error) {
      const refused = refusalOf(error, { password: 'password' });
      return again(refused.status, refused.errors, refused.problem);
    }
    if (!joined.joined) {
      // Used, revoked or expired while the password was checked.
      if (joined.state === 'unknown') throw notFoundPage();
      return sendPage(reply, invitationGonePage(joined.state), 410);
    }
    // As sign-in does: a session brought along ends, so no session id chosen before joining survives it.
    const previous = readCookie(request.headers.cookie, SESSION_COOKIE);
    if (previous) await endSession(ctx, previous);
    // An account that requires one-time codes: they are turned on first, as at a sign-in (mfa-routes.ts).
    if ('secondStep' in joined) {
      return beginSecondStep(ctx, reply, { userId: joined.userId, accountId: joined.accountId, email: joined.email, step: joined.secondStep }, options);
    }
    return reply.header('set-cookie', sessionCookie(joined.sessionToken, options)).redirect(HOME, 303);
  });
}
