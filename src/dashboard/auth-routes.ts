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
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AddressLimit } from '../auth/rate-limit.js';
import { html } from '../web/html.js';
import { sameText } from '../digest.js';
import type { ServiceContext } from '../services/context.js';
import { ServiceError } from '../services/service-error.js';
import { endSession, openSession, SESSION_SECONDS, signIn, signUp, signUpAllowed } from '../services/sessions.js';
import { cookie, readCookie } from '../web/cookies.js';
import { formText } from '../web/form-fields.js';
import { formError, sentence, textField, type FieldErrors } from './forms.js';
import { fixedText, publicPage, sendPage } from './layout.js';

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

/** What the sign-in page may say above its form, by `?notice=` code. */
const NOTICES: Record<string, string> = {
  'signed-up':
    'Sign in with the email and password you just entered. If that email already had an account, nothing was changed: use the password it already has.',
};

const TOO_MANY_FROM_ADDRESS = 'Too many attempts from this address. Wait a minute and try again.';

/** "after 10:45 UTC": when a locked email may sign in again. */
const lockEnd = (until: string) => `${until.slice(11, 16)} UTC`;

export function registerAuthRoutes(scope: FastifyInstance, ctx: ServiceContext, options: SessionCookies & { passwordChecksPerMinute: number }) {
  // Every sign-in and sign-up is counted before scrypt runs: counting only failures, after the
  // check, let a burst sent at once all be checked before the first one was counted.
  const fromAddress = new AddressLimit(options.passwordChecksPerMinute);
  const overLimit = (request: FastifyRequest) => fromAddress.hit(request.ip, ctx.clock.now().getTime()).limited;
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

  const signInForm = (csrf: string, email: string, errors: FieldErrors, problem: { text?: string | null; signUp: boolean; notice?: string | null }) =>
    publicPage(
      'Sign in',
      html`${problem.notice ? html`<p class="notice" role="status">${problem.notice}</p>` : ''}${formError(problem.text)}
<form method="post" action="/dashboard/sign-in" novalidate>
<input type="hidden" name="csrf" value="${csrf}">
${textField({ name: 'email', label: 'Email', type: 'email', value: email, required: true, autocomplete: 'username', errors })}
${textField({ name: 'password', label: 'Password', type: 'password', required: true, autocomplete: 'current-password', errors })}
<button type="submit">Sign in</button>
</form>
${problem.signUp ? html`<p class="aside">New to Keyward? <a href="/dashboard/sign-up">Create account</a></p>` : ''}`,
    );

  const signUpForm = (csrf: string, values: Record<string, string>, errors: FieldErrors, problem?: string) =>
    publicPage(
      'Create account',
      html`${formError(problem)}
<form method="post" action="/dashboard/sign-up" novalidate>
<input type="hidden" name="csrf" value="${csrf}">
${textField({ name: 'accountName', label: 'Company or team name', value: values.accountName, required: true, maxLength: 200, errors })}
${textField({ name: 'email', label: 'Email', type: 'email', value: values.email, required: true, autocomplete: 'username', errors })}
${textField({ name: 'password', label: 'Password', type: 'password', required: true, autocomplete: 'new-password', hint: 'At least 8 characters.', errors })}
<button type="submit">Create account</button>
</form>
<p class="aside">Already have an account? <a href="/dashboard/sign-in">Sign in</a></p>`,
    );

  /** The answer to a sign-up the policy refuses (KEYWARD_SIGNUP): how accounts are made here instead. */
  const signUpClosed = () =>
    publicPage(
      'Accounts are made by the operator',
      html`<p>This Keyward does not create accounts from the dashboard. Its operator makes them on the server, with:</p>
<pre><code>npx keyward account create --name "Your company" --email you@company.example --password …</code></pre>
<p>Ask the person who runs this Keyward for an account. If you have one already, <a href="/dashboard/sign-in">sign in</a>.</p>`,
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
    const notice = fixedText(NOTICES, (request.query as Record<string, unknown>).notice);
    return sendPage(reply, signInForm(anonCsrf(formNonce(request, reply)), '', {}, { signUp: await signUpAllowed(ctx), notice }));
  });

  scope.post('/sign-in', async (request, reply) => {
    if (!csrfValid(request)) return sendPage(reply, expired(), 403);
    const csrf = formText(request.body, 'csrf');
    const email = formText(request.body, 'email').trim();
    const password = formText(request.body, 'password');
    const errors: FieldErrors = {};
    if (!email) errors.email = 'Enter your email.';
    if (!password) errors.password = 'Enter your password.';
    const again = async (status: number, text?: string) =>
      sendPage(reply, signInForm(csrf, email, errors, { text, signUp: await signUpAllowed(ctx) }), status);
    if (Object.keys(errors).length) return again(422);
    if (overLimit(request)) return again(429, TOO_MANY_FROM_ADDRESS);
    const result = await signIn(ctx, { email, password });
    if (result.ok) return startSession(request, reply, result.token);
    if (result.reason === 'locked') return again(429, `Too many failed sign-ins for this email. Try again after ${lockEnd(result.until)}.`);
    const locked = result.lockedUntil ? ` Too many failed sign-ins for this email: try again after ${lockEnd(result.lockedUntil)}.` : '';
    return again(401, `That email and password do not match an account.${locked}`);
  });

  scope.get('/sign-up', async (request, reply) => {
    if (await signedIn(request)) return reply.redirect(HOME, 303);
    if (!(await signUpAllowed(ctx))) return sendPage(reply, signUpClosed(), 403);
    return sendPage(reply, signUpForm(anonCsrf(formNonce(request, reply)), {}, {}));
  });

  scope.post('/sign-up', async (request, reply) => {
    if (!(await signUpAllowed(ctx))) return sendPage(reply, signUpClosed(), 403);
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
    if (overLimit(request)) return sendPage(reply, signUpForm(csrf, values, {}, TOO_MANY_FROM_ADDRESS), 429);
    let result: Awaited<ReturnType<typeof signUp>>;
    try {
      result = await signUp(ctx, { accountName: values.accountName, email: values.email, password });
    } catch (error) {
      // The service's own checks (well-formed text…) refuse what the form's checks above let through.
      if (error instanceof ServiceError && error.reason === 'invalid') return sendPage(reply, signUpForm(csrf, values, {}, sentence(error.message)), 422);
      throw error;
    }
    // Another sign-up made the instance's first account while this one was checked.
    if (result === 'refused') return sendPage(reply, signUpClosed(), 403);
    return reply.redirect('/dashboard/sign-in?notice=signed-up', 303);
  });
}
