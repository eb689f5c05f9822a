/**
 * Sign up ("Create account"), sign in ("Email", "Password", "Sign in") and sign out (CONTRACT 6).
 * The anonymous forms carry a CSRF token too (a nonce cookie and its MAC), so another site cannot sign
 * a browser in to an account of its choosing.
 *
 * Both forms run scrypt, so both are counted per client address before it runs (one budget for the
 * two: what is limited is the work an address can cause). Neither answer tells whether an email has
 * an account: sign-up answers the same redirect to "Sign in" whether it made an account or found the
 * email taken, and sign-in's failures and lock-out read the same for every email.
 */
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AddressLimit } from '../auth/rate-limit.js';
import type { ServiceContext } from '../services/context.js';
import { endSession, openSession, SESSION_LIFETIME_SECONDS, signIn, signUp, signUpAllowed } from '../services/users/sessions.js';
import { cookie, readCookie } from '../web/cookies.js';
import { nonceCookie, nonceMatches } from '../web/nonce-cookie.js';
import { expiredAnonymousForm, signInForm, signUpClosed, signUpForm } from './auth-views.js';
import { clockTime } from './display-format.js';
import { refusalOf } from './domain-errors.js';
import { Filled, formErrors, formRoute, Notice, PublicForm, Query, queryRoute, refuseMalformed, Text } from './form-schemas.js';
import { fixedText, sendPage } from './layout.js';
import { beginSecondStep } from './second-step-cookie.js';

export const SESSION_COOKIE = 'keyward_session';
export const ANON_CSRF_COOKIE = 'keyward_dashboard_csrf';
/** The CSRF token of a browser's anonymous forms (sign-in, sign-up, joining a team): a MAC of its nonce cookie. */
export const anonymousCsrf = (ctx: ServiceContext, nonce: string) => ctx.vault.mac(`dashboard-anon-csrf|${nonce}`);
export const HOME = '/dashboard/servers';

export interface SessionCookies {
  secure: boolean;
}

/** The session cookie is Secure when the dashboard is served over https. */
export function sessionCookiesOf(ctx: ServiceContext): SessionCookies {
  return { secure: ctx.publicUrl.startsWith('https:') };
}

export function sessionCookie(token: string, options: SessionCookies): string {
  return cookie(SESSION_COOKIE, token, { path: '/dashboard', sameSite: 'Lax', secure: options.secure, maxAge: SESSION_LIFETIME_SECONDS });
}

export function clearedSessionCookie(options: SessionCookies): string {
  return cookie(SESSION_COOKIE, '', { path: '/dashboard', sameSite: 'Lax', secure: options.secure, maxAge: 0 });
}

/** What the sign-in page may say above its form, by `?notice=` code. */
const NOTICES: Record<string, string> = {
  'signed-up':
    'Sign in with the email and password you just entered. If that email already had an account, nothing was changed: use the password it already has.',
  'signed-out-everywhere': 'You were signed out on every device. Sign in again to continue.',
  'second-step-expired': 'Your sign-in was not finished within 5 minutes. Sign in again.',
};

const SignInQuery = Query({ notice: Notice });
// A password is taken as typed: spaces count, so only an empty one is "not entered".
export const SignInBody = PublicForm({ email: Filled(), password: Type.String({ minLength: 1, maxLength: 4096 }) });
// The account's rules (a name's length, an email's form, a password's length) are the service's.
export const SignUpBody = PublicForm({ accountName: Text(), email: Text(), password: Text() });

export const TOO_MANY_FROM_ADDRESS = 'Too many attempts from this address. Wait a minute and try again.';

/** The lock-out's words (sign-in-attempts.ts), for a password or a one-time code alike: refused unchecked… */
export const lockedOutText = (until: string) => `Too many failed sign-ins for this email. Try again after ${clockTime(until)}.`;
/** …and the failure that used the window's last attempt (nothing when it did not). */
export const lastAttemptText = (lockedUntil: string | null) =>
  lockedUntil ? ` Too many failed sign-ins for this email: try again after ${clockTime(lockedUntil)}.` : '';
/** A right password of a user whose account requires SSO (CONTRACT 9): where to go instead. */
export const SSO_REQUIRED = 'Your account requires single sign-on, so its password is turned off: use “Sign in with SSO” below.';

export function registerAuthRoutes(scope: FastifyInstance, ctx: ServiceContext, options: SessionCookies & { passwordChecksPerMinute: number }) {
  // Every sign-in and sign-up is counted before scrypt runs: counting only failures, after the
  // check, let a burst sent at once all be checked before the first one was counted.
  const fromAddress = new AddressLimit(options.passwordChecksPerMinute);
  const overLimit = (request: FastifyRequest) => fromAddress.hit(request.ip, ctx.clock.now().getTime()).limited;
  const anonCsrf = (nonce: string) => anonymousCsrf(ctx, nonce);

  /** The nonce of this browser's anonymous forms, made (and set as a cookie) on its first visit. */
  const formNonce = (request: FastifyRequest, reply: FastifyReply) =>
    nonceCookie(request, reply, { name: ANON_CSRF_COOKIE, path: '/dashboard', secure: options.secure });
  const csrfValid = (request: FastifyRequest) => nonceMatches(request, ANON_CSRF_COOKIE, anonCsrf);
  async function signedIn(request: FastifyRequest): Promise<boolean> {
    const token = readCookie(request.headers.cookie, SESSION_COOKIE);
    return !!token && (await openSession(ctx, token)) !== null;
  }

  /** Signs the browser in with a new session, ending the one it brought (no session id outlives a sign-in). */
  async function startSession(request: FastifyRequest, reply: FastifyReply, token: string) {
    const previous = readCookie(request.headers.cookie, SESSION_COOKIE);
    if (previous) await endSession(ctx, previous);
    return reply.header('set-cookie', sessionCookie(token, options)).redirect(HOME, 303);
  }

  scope.get<{ Querystring: Static<typeof SignInQuery> }>('/sign-in', queryRoute(SignInQuery), async (request, reply) => {
    refuseMalformed(request);
    if (await signedIn(request)) return reply.redirect(HOME, 303);
    const notice = fixedText(NOTICES, request.query.notice);
    return sendPage(reply, signInForm(anonCsrf(formNonce(request, reply)), '', {}, { signUp: await signUpAllowed(ctx), notice }));
  });

  scope.post<{ Body: Static<typeof SignInBody> }>('/sign-in', formRoute(SignInBody), async (request, reply) => {
    if (!csrfValid(request)) return sendPage(reply, expiredAnonymousForm(), 403);
    const errors = formErrors(request, { email: 'Enter your email.', password: 'Enter your password.' });
    const { csrf } = request.body;
    const email = (request.body.email ?? '').trim();
    const password = request.body.password ?? '';
    const again = async (status: number, text?: string) =>
      sendPage(reply, signInForm(csrf, email, errors ?? {}, { text, signUp: await signUpAllowed(ctx) }), status);
    if (errors) return again(422);
    if (overLimit(request)) return again(429, TOO_MANY_FROM_ADDRESS);
    const result = await signIn(ctx, { email, password, device: { userAgent: request.headers['user-agent'], address: request.ip } });
    // A user with one-time codes (or whose account requires them) gives a code before any session (mfa-routes.ts).
    if (result.ok === 'second_step') return beginSecondStep(ctx, reply, result, options);
    if (result.ok) return startSession(request, reply, result.token);
    if (result.reason === 'sso_required') return again(403, SSO_REQUIRED);
    if (result.reason === 'locked') return again(429, lockedOutText(result.until));
    return again(401, `That email and password do not match an account.${lastAttemptText(result.lockedUntil)}`);
  });

  scope.get('/sign-up', async (request, reply) => {
    if (await signedIn(request)) return reply.redirect(HOME, 303);
    if (!(await signUpAllowed(ctx))) return sendPage(reply, signUpClosed(), 403);
    return sendPage(reply, signUpForm(anonCsrf(formNonce(request, reply)), {}, {}));
  });

  scope.post<{ Body: Static<typeof SignUpBody> }>('/sign-up', formRoute(SignUpBody), async (request, reply) => {
    if (!(await signUpAllowed(ctx))) return sendPage(reply, signUpClosed(), 403);
    if (!csrfValid(request)) return sendPage(reply, expiredAnonymousForm(), 403);
    const errors = formErrors(request);
    const { csrf } = request.body;
    const values = { accountName: (request.body.accountName ?? '').trim(), email: (request.body.email ?? '').trim() };
    const password = request.body.password ?? '';
    if (errors) return sendPage(reply, signUpForm(csrf, values, errors), 422);
    if (overLimit(request)) return sendPage(reply, signUpForm(csrf, values, {}, TOO_MANY_FROM_ADDRESS), 429);
    let result: Awaited<ReturnType<typeof signUp>>;
    try {
      result = await signUp(ctx, { accountName: values.accountName, email: values.email, password });
    } catch (error) {
      // The account's rules are the service's; an email already taken never reaches here (signUp answers as for a new one).
      const refused = refusalOf(error, { name: 'accountName', email: 'email', password: 'password' });
      return sendPage(reply, signUpForm(csrf, values, refused.errors, refused.problem), refused.status);
    }
    // Another sign-up made the instance's first account while this one was checked.
    if (result === 'refused') return sendPage(reply, signUpClosed(), 403);
    return reply.redirect('/dashboard/sign-in?notice=signed-up', 303);
  });
}
