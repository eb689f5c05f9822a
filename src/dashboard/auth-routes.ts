/**
 * Sign up ("Create account"), sign in ("Email", "Password", "Sign in") and sign out (CONTRACT 6).
 * The anonymous forms carry a CSRF token too (a nonce cookie and its MAC), so another site cannot sign
 * a browser in to an account of its choosing.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { WindowCounter } from '../auth/rate-limit.js';
import { html } from '../connect/html.js';
import { cookie, readCookie, sameText } from '../http/cookies.js';
import type { ServiceContext } from '../services/context.js';
import { ServiceError } from '../services/service-error.js';
import { endSession, openSession, SESSION_SECONDS, signIn, signUp } from '../services/sessions.js';
import { formError, formText, textField, type FieldErrors } from './forms.js';
import { publicPage, sendPage } from './layout.js';

export const SESSION_COOKIE = 'keyward_session';
const ANON_CSRF_COOKIE = 'keyward_dashboard_csrf';
export const HOME = '/dashboard/servers';

export interface SessionCookies {
  secure: boolean;
}

export function sessionCookie(token: string, options: SessionCookies): string {
  return cookie(SESSION_COOKIE, token, { path: '/dashboard', sameSite: 'Lax', secure: options.secure, maxAge: SESSION_SECONDS });
}

export function clearedSessionCookie(options: SessionCookies): string {
  return cookie(SESSION_COOKIE, '', { path: '/dashboard', sameSite: 'Lax', secure: options.secure, maxAge: 0 });
}

export function registerAuthRoutes(scope: FastifyInstance, ctx: ServiceContext, options: SessionCookies & { failuresPerMinute: number }) {
  const failures = new WindowCounter(options.failuresPerMinute);
  const anonCsrf = (nonce: string) => ctx.vault.mac(`dashboard-anon-csrf|${nonce}`);

  /** The nonce of this browser's anonymous forms, made (and set as a cookie) on its first visit. */
  function formNonce(request: FastifyRequest, reply: FastifyReply): string {
    const given = readCookie(request.headers.cookie, ANON_CSRF_COOKIE);
    if (given && /^[A-Za-z0-9_-]{43}$/.test(given)) return given;
    const nonce = randomBytes(32).toString('base64url');
    reply.header('set-cookie', cookie(ANON_CSRF_COOKIE, nonce, { path: '/dashboard', sameSite: 'Strict', secure: options.secure }));
    return nonce;
  }
  function csrfValid(request: FastifyRequest): boolean {
    const nonce = readCookie(request.headers.cookie, ANON_CSRF_COOKIE);
    return !!nonce && sameText(formText(request.body, 'csrf'), anonCsrf(nonce));
  }
  async function signedIn(request: FastifyRequest): Promise<boolean> {
    const token = readCookie(request.headers.cookie, SESSION_COOKIE);
    return !!token && (await openSession(ctx, token)) !== null;
  }

  const signInForm = (csrf: string, email: string, errors: FieldErrors, problem?: string) =>
    publicPage(
      'Sign in',
      html`${formError(problem)}
<form method="post" action="/dashboard/sign-in" novalidate>
<input type="hidden" name="csrf" value="${csrf}">
${textField({ name: 'email', label: 'Email', type: 'email', value: email, required: true, autocomplete: 'username', errors })}
${textField({ name: 'password', label: 'Password', type: 'password', required: true, autocomplete: 'current-password', errors })}
<button type="submit">Sign in</button>
</form>
<p class="aside">New to Keyward? <a href="/dashboard/sign-up">Create account</a></p>`,
    );

  const signUpForm = (csrf: string, values: Record<string, string>, errors: FieldErrors) =>
    publicPage(
      'Create account',
      html`<form method="post" action="/dashboard/sign-up" novalidate>
<input type="hidden" name="csrf" value="${csrf}">
${textField({ name: 'accountName', label: 'Company or team name', value: values.accountName, required: true, maxLength: 200, errors })}
${textField({ name: 'email', label: 'Email', type: 'email', value: values.email, required: true, autocomplete: 'username', errors })}
${textField({ name: 'password', label: 'Password', type: 'password', required: true, autocomplete: 'new-password', hint: 'At least 8 characters.', errors })}
<button type="submit">Create account</button>
</form>
<p class="aside">Already have an account? <a href="/dashboard/sign-in">Sign in</a></p>`,
    );

  const expired = () => publicPage('Form expired', html`<p>This form could not be verified. <a href="/dashboard/sign-in">Reload it</a> and try again.</p>`);

  /** Signs the browser in with a new session, ending the one it brought (no session id outlives a sign-in). */
  async function startSession(request: FastifyRequest, reply: FastifyReply, token: string) {
    const previous = readCookie(request.headers.cookie, SESSION_COOKIE);
    if (previous) await endSession(ctx, previous);
    return reply.header('set-cookie', sessionCookie(token, options)).redirect(HOME, 303);
  }

  scope.get('/sign-in', async (request, reply) => {
    if (await signedIn(request)) return reply.redirect(HOME, 303);
    return sendPage(reply, signInForm(anonCsrf(formNonce(request, reply)), '', {}));
  });

  scope.post('/sign-in', async (request, reply) => {
    if (!csrfValid(request)) return sendPage(reply, expired(), 403);
    const csrf = formText(request.body, 'csrf');
    const email = formText(request.body, 'email').trim();
    const password = formText(request.body, 'password');
    const errors: FieldErrors = {};
    if (!email) errors.email = 'Enter your email.';
    if (!password) errors.password = 'Enter your password.';
    if (Object.keys(errors).length) return sendPage(reply, signInForm(csrf, email, errors), 422);
    if (failures.peek(request.ip, ctx.clock.now().getTime()).limited) {
      return sendPage(reply, signInForm(csrf, email, {}, 'Too many failed sign-ins from this address. Wait a minute and try again.'), 429);
    }
    const result = await signIn(ctx, { email, password });
    if (result.ok) return startSession(request, reply, result.token);
    failures.hit(request.ip, ctx.clock.now().getTime());
    if (result.reason === 'locked') {
      const at = result.until.slice(11, 16);
      return sendPage(reply, signInForm(csrf, email, {}, `Too many failed sign-ins for this account. Try again after ${at} UTC.`), 429);
    }
    return sendPage(reply, signInForm(csrf, email, {}, 'That email and password do not match an account.'), 401);
  });

  scope.get('/sign-up', async (request, reply) => {
    if (await signedIn(request)) return reply.redirect(HOME, 303);
    return sendPage(reply, signUpForm(anonCsrf(formNonce(request, reply)), {}, {}));
  });

  scope.post('/sign-up', async (request, reply) => {
    if (!csrfValid(request)) return sendPage(reply, expired(), 403);
    const csrf = formText(request.body, 'csrf');
    const values = { accountName: formText(request.body, 'accountName').trim(), email: formText(request.body, 'email').trim() };
    const password = formText(request.body, 'password');
    const errors: FieldErrors = {};
    if (!values.accountName) errors.accountName = 'Enter the name of your company or team.';
    else if (values.accountName.length > 200) errors.accountName = 'Use at most 200 characters.';
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(values.email)) errors.email = 'Enter an email address such as you@company.com.';
    if (password.length < 8) errors.password = 'Use at least 8 characters.';
    else if (password.length > 1024) errors.password = 'Use at most 1024 characters.';
    if (Object.keys(errors).length) return sendPage(reply, signUpForm(csrf, values, errors), 422);
    try {
      return startSession(request, reply, await signUp(ctx, { accountName: values.accountName, email: values.email, password }));
    } catch (error) {
      if (error instanceof ServiceError && error.reason === 'conflict') {
        return sendPage(reply, signUpForm(csrf, values, { email: 'An account with this email exists already. Sign in instead.' }), 409);
      }
      throw error;
    }
  });
}
