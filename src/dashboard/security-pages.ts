/**
 * "Security" (CONTRACT 9): the signed-in user's own sessions, "Sign out" of one of them and "Sign out
 * everywhere". A session id from the URL is looked up among the user's own live sessions only:
 * another user's (of this account or another) answers the same 404 as an unknown one and ends
 * nothing. Ending this browser's own session, one way or the other, signs it out as "Sign out" does.
 */

import type { Static } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { userActor } from '../services/context.js';
import { mfaRequired } from '../services/mfa/mfa-policy.js';
import { codesState } from '../services/mfa/one-time-codes.js';
import { endEverySession, endSessionOf, listSessions, type SessionOwner } from '../services/users/sessions.js';
import { clearedSessionCookie, sessionCookiesOf } from './auth-routes.js';
import { notFoundPage } from './domain-errors.js';
import { formRoute, Notice, Query, queryRoute, refuseMalformed, SignedInForm } from './form-schemas.js';
import { fixedText, sendPage } from './layout.js';
import type { PageContext } from './layout-views.js';
import { type PageRoutes, pageContext } from './plugin.js';
import { SECURITY_URL, securityPage } from './security-views.js';

/** The notices a redirect may ask for, by code: the page shows only these fixed texts. */
const NOTICES: Record<string, string> = {
  'session-ended': 'The session was signed out. That browser has to sign in again.',
  'mfa-off': 'One-time codes are off: sign-in asks only for your password, and your recovery codes no longer work.',
  'mfa-on-already': 'One-time codes are on already.',
  'mfa-not-on': 'One-time codes are not on.',
};

const SecurityQuery = Query({ notice: Notice });
/** "Sign out" and "Sign out everywhere": a button and the CSRF token. */
const SessionButtonBody = SignedInForm({});
type SessionParams = { sessionId: string };

/** The signed-in user, over their own sessions, named in the audit trail as themselves. */
function ownerOf(context: PageContext): SessionOwner {
  return { userId: context.user.userId, accountId: context.user.accountId, actor: userActor(context.user.userId) };
}

export const registerSecurityPages: PageRoutes = (scope, ctx) => {
  const cookies = sessionCookiesOf(ctx);
  const signedOut = (reply: FastifyReply, to: string) => reply.header('set-cookie', clearedSessionCookie(cookies)).redirect(to, 303);

  scope.get<{ Querystring: Static<typeof SecurityQuery> }>('/security', queryRoute(SecurityQuery), async (request, reply) => {
    refuseMalformed(request);
    const context = pageContext(request);
    const sessions = await listSessions(ctx, context.user.userId);
    const codes = { ...(await codesState(ctx, context.user.userId)), required: await mfaRequired(ctx, context.user.accountId) };
    return sendPage(reply, securityPage(context, { sessions, codes, notice: fixedText(NOTICES, request.query.notice) }));
  });

  scope.post<{ Params: SessionParams; Body: Static<typeof SessionButtonBody> }>(
    '/security/sessions/:sessionId/end',
    formRoute(SessionButtonBody),
    async (request, reply) => {
      refuseMalformed(request);
      const context = pageContext(request);
      const { sessionId } = request.params;
      if (!(await endSessionOf(ctx, ownerOf(context), sessionId))) throw notFoundPage();
      if (sessionId === context.user.sessionId) return signedOut(reply, '/dashboard/sign-in');
      return reply.redirect(`${SECURITY_URL}?notice=session-ended`, 303);
    },
  );

  scope.post<{ Body: Static<typeof SessionButtonBody> }>('/security/sessions/end-all', formRoute(SessionButtonBody), async (request, reply) => {
    refuseMalformed(request);
    await endEverySession(ctx, ownerOf(pageContext(request)));
    return signedOut(reply, '/dashboard/sign-in?notice=signed-out-everywhere');
  });
};
