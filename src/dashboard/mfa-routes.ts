/**
 * The sign-in's second step (CONTRACT 9), public like sign-in itself: the browser has no session yet,
 * only the sealed note of its pending sign-in (second-step-cookie.ts). GET /dashboard/sign-in/code asks
 * for the code from the authenticator app (or, where the account requires codes of a user who has
 * none, shows the enrolment), GET /dashboard/sign-in/recovery for a recovery code; their POSTs check it
 * and start the session. Without a live note (none, forged, past its 5 minutes) both go back to
 * "Sign in".
 *
 * The forms carry the anonymous CSRF token of sign-in (auth-routes.ts). Every code counts toward the
 * email's sign-in lock-out (services/users/second-step.ts): the sixth wrong one in a row, like the
 * sixth wrong password, is refused unchecked with the lock-out's words, and so is the right one until
 * the lock-out ends.
 */
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ServiceContext } from '../services/context.js';
import { pendingEnrolment, startEnrolment } from '../services/mfa/one-time-codes.js';
import { type PendingSignIn, type SecondStepResult, signInWithCode, signInWithEnrolment } from '../services/users/second-step.js';
import { endSession, type SessionDevice } from '../services/users/sessions.js';
import { readCookie } from '../web/cookies.js';
import { nonceCookie, nonceMatches } from '../web/nonce-cookie.js';
import { ANON_CSRF_COOKIE, anonymousCsrf, HOME, lastAttemptText, lockedOutText, SESSION_COOKIE, type SessionCookies, sessionCookie } from './auth-routes.js';
import { expiredAnonymousForm } from './auth-views.js';
import { Filled, formErrors, formRoute, PublicForm } from './form-schemas.js';
import { sendPage } from './layout.js';
import {
  type CodeForm,
  REUSED_CODE,
  SIGN_IN_CODE_URL,
  signedInWithRecoveryCodesPage,
  signInCodePage,
  signInEnrolPage,
  signInRecoveryPage,
  WRONG_ENROLMENT_CODE,
} from './mfa-views.js';
import { qrCodeSvg } from './qr-code.js';
import { clearedSecondStepCookie, pendingSignInOf } from './second-step-cookie.js';

export const SignInCodeBody = PublicForm({ code: Filled(64) });
export const SignInRecoveryBody = PublicForm({ recoveryCode: Filled(64) });

const WRONG_CODE = 'That code is not right. Type the code your authenticator app shows now.';
const WRONG_RECOVERY_CODE = 'That is not one of your unused recovery codes.';

/** How a refused code reads on the page, with its status. */
function refusalText(result: Exclude<SecondStepResult, { ok: true }> | { ok: false; reason: 'wrong_enrolment_code' }, wrong: string) {
  switch (result.reason) {
    case 'locked':
      return { status: 429, text: lockedOutText(result.until) };
    case 'wrong':
      return { status: 401, text: `${wrong}${lastAttemptText(result.lockedUntil)}` };
    case 'reused':
      return { status: 401, text: `${REUSED_CODE}${lastAttemptText(result.lockedUntil)}` };
    case 'wrong_enrolment_code':
      return { status: 422, text: WRONG_ENROLMENT_CODE };
    default:
      return null;
  }
}

export function registerSecondStepRoutes(scope: FastifyInstance, ctx: ServiceContext, options: SessionCookies) {
  const anonCsrf = (nonce: string) => anonymousCsrf(ctx, nonce);
  const formNonce = (request: FastifyRequest, reply: FastifyReply) =>
    nonceCookie(request, reply, { name: ANON_CSRF_COOKIE, path: '/dashboard', secure: options.secure });
  const csrfValid = (request: FastifyRequest) => nonceMatches(request, ANON_CSRF_COOKIE, anonCsrf);
  const deviceOf = (request: FastifyRequest): SessionDevice => ({ userAgent: request.headers['user-agent'], address: request.ip });

  /** No live pending sign-in: back to "Sign in", the note dropped. */
  const startAgain = (reply: FastifyReply) =>
    reply.header('set-cookie', clearedSecondStepCookie(options)).redirect('/dashboard/sign-in?notice=second-step-expired', 303);

  /** The enrolment page of a user who must turn codes on: the enrolment they started, or a new one; null when their codes are on already. */
  async function enrolPage(pending: PendingSignIn, csrf: string, form?: CodeForm): Promise<string | null> {
    const user = { userId: pending.userId, email: pending.email };
    const enrolment = (await pendingEnrolment(ctx, user)) ?? (await startEnrolment(ctx, user));
    return enrolment && signInEnrolPage(csrf, enrolment, await qrCodeSvg(enrolment.uri), form);
  }

  /** A second step done: the session (a new one; any the browser brought ends), the note dropped. */
  async function signedIn(request: FastifyRequest, reply: FastifyReply, token: string, recoveryCodes: string[] | null) {
    const previous = readCookie(request.headers.cookie, SESSION_COOKIE);
    if (previous) await endSession(ctx, previous);
    reply.header('set-cookie', clearedSecondStepCookie(options)).header('set-cookie', sessionCookie(token, options));
    // After an enrolment, the recovery codes exist only in this answer.
    return recoveryCodes ? sendPage(reply, signedInWithRecoveryCodesPage(recoveryCodes, HOME)) : reply.redirect(HOME, 303);
  }

  scope.get('/sign-in/code', async (request, reply) => {
    const pending = pendingSignInOf(ctx, request);
    if (!pending) return startAgain(reply);
    const csrf = anonCsrf(formNonce(request, reply));
    if (pending.step === 'code') return sendPage(reply, signInCodePage(csrf));
    const page = await enrolPage(pending, csrf);
    return page ? sendPage(reply, page) : startAgain(reply);
  });

  scope.get('/sign-in/recovery', async (request, reply) => {
    const pending = pendingSignInOf(ctx, request);
    if (!pending) return startAgain(reply);
    // A user turning codes on has no recovery codes yet.
    if (pending.step === 'enrol') return reply.redirect(SIGN_IN_CODE_URL, 303);
    return sendPage(reply, signInRecoveryPage(anonCsrf(formNonce(request, reply))));
  });

  scope.post<{ Body: Static<typeof SignInCodeBody> }>('/sign-in/code', formRoute(SignInCodeBody), async (request, reply) => {
    if (!csrfValid(request)) return sendPage(reply, expiredAnonymousForm(), 403);
    const errors = formErrors(request, { code: 'Enter the code.' });
    const pending = pendingSignInOf(ctx, request);
    if (!pending) return startAgain(reply);
    const { csrf } = request.body;
    const again = async (status: number, form: CodeForm) => {
      if (pending.step === 'code') return sendPage(reply, signInCodePage(csrf, form), status);
      const page = await enrolPage(pending, csrf, form);
      return page ? sendPage(reply, page, status) : startAgain(reply);
    };
    if (errors) return again(422, { errors });
    const code = request.body.code;
    const result =
      pending.step === 'code' ? await signInWithCode(ctx, pending, code, deviceOf(request)) : await signInWithEnrolment(ctx, pending, code, deviceOf(request));
    if (result.ok) return signedIn(request, reply, result.token, result.recoveryCodes);
    const refused = refusalText(result, WRONG_CODE);
    return refused ? again(refused.status, { errors: {}, problem: refused.text }) : startAgain(reply);
  });

  scope.post<{ Body: Static<typeof SignInRecoveryBody> }>('/sign-in/recovery', formRoute(SignInRecoveryBody), async (request, reply) => {
    if (!csrfValid(request)) return sendPage(reply, expiredAnonymousForm(), 403);
    const errors = formErrors(request, { recoveryCode: 'Enter one of your recovery codes.' });
    const pending = pendingSignInOf(ctx, request);
    if (!pending) return startAgain(reply);
    if (pending.step === 'enrol') return reply.redirect(SIGN_IN_CODE_URL, 303);
    const { csrf } = request.body;
    if (errors) return sendPage(reply, signInRecoveryPage(csrf, { errors }), 422);
    const result = await signInWithCode(ctx, pending, request.body.recoveryCode, deviceOf(request));
    if (result.ok) return signedIn(request, reply, result.token, null);
    const refused = refusalText(result, WRONG_RECOVERY_CODE);
    return refused ? sendPage(reply, signInRecoveryPage(csrf, { errors: {}, problem: refused.text }), refused.status) : startAgain(reply);
  });
}
