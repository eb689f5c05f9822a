/**
 * The hand-over from a right password to the sign-in's second step (CONTRACT 9; mfa-routes.ts has its
 * pages): the browser gets no session yet, only a sealed note of the pending sign-in in a cookie that
 * lives 5 minutes, and is sent to "Enter the code from your authenticator app". Its own file so that
 * sign-in (auth-routes.ts) and the second step's routes both use it without importing each other.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServiceContext } from '../services/context.js';
import { openPendingSignIn, type PendingSignIn, SECOND_STEP_SECONDS, sealPendingSignIn } from '../services/users/second-step.js';
import { cookie, readCookie } from '../web/cookies.js';
import { SIGN_IN_CODE_URL } from './mfa-views.js';

const SECOND_STEP_COOKIE = 'keyward_second_step';

/** Strict: the note is only ever sent by the dashboard's own pages, never on a link from elsewhere. */
const secondStepCookie = (value: string, secure: boolean, maxAge: number) =>
  cookie(SECOND_STEP_COOKIE, value, { path: '/dashboard', sameSite: 'Strict', secure, maxAge });

/** Answers a right password whose sign-in needs a code (or an enrolment) first: the note, and the code page. */
export function beginSecondStep(ctx: ServiceContext, reply: FastifyReply, pending: Omit<PendingSignIn, 'expiresAt'>, options: { secure: boolean }) {
  const note = sealPendingSignIn(ctx, { userId: pending.userId, accountId: pending.accountId, email: pending.email, step: pending.step });
  return reply.header('set-cookie', secondStepCookie(note, options.secure, SECOND_STEP_SECONDS)).redirect(SIGN_IN_CODE_URL, 303);
}

/** The browser's pending sign-in, or null (none, forged, or past its 5 minutes). */
export function pendingSignInOf(ctx: ServiceContext, request: FastifyRequest): PendingSignIn | null {
  return openPendingSignIn(ctx, readCookie(request.headers.cookie, SECOND_STEP_COOKIE));
}

/** The note's end: once the second step is done, or has to start again. */
export function clearedSecondStepCookie(options: { secure: boolean }): string {
  return secondStepCookie('', options.secure, 0);
}
