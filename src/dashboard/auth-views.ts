/**
 * What sign-in and sign-up show (auth-routes.ts has the routes): the two public forms, each with its
 * anonymous CSRF token, the page that says accounts are made by the operator, and the expired form.
 */
import { html } from '../web/html.js';
import { type FieldErrors, formError, textField } from './forms.js';
import { publicPage } from './layout-views.js';

export function signInForm(
  csrf: string,
  email: string,
  errors: FieldErrors,
  problem: { text?: string | null; signUp: boolean; notice?: string | null },
): string {
  return publicPage(
    'Sign in',
    html`${problem.notice ? html`<p class="notice" role="status">${problem.notice}</p>` : ''}${formError(problem.text)}
<form method="post" action="/dashboard/sign-in" novalidate>
<input type="hidden" name="csrf" value="${csrf}">
${textField({ name: 'email', label: 'Email', type: 'email', value: email, required: true, autocomplete: 'username', errors })}
${textField({ name: 'password', label: 'Password', type: 'password', required: true, autocomplete: 'current-password', errors })}
<button type="submit">Sign in</button>
</form>
<p class="aside"><a href="/dashboard/sso">Sign in with SSO</a></p>
${problem.signUp ? html`<p class="aside">New to Keyward? <a href="/dashboard/sign-up">Create account</a></p>` : ''}`,
  );
}

export function signUpForm(csrf: string, values: Record<string, string>, errors: FieldErrors, problem?: string): string {
  return publicPage(
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
}

/** The answer to a sign-up the policy refuses (KEYWARD_SIGNUP): how accounts are made here instead. */
export function signUpClosed(): string {
  return publicPage(
    'Accounts are made by the operator',
    html`<p>This Keyward does not create accounts from the dashboard. Its operator makes them on the server, with:</p>
<pre><code>npx keyward account create --name "Your company" --email you@company.example --password …</code></pre>
<p>Ask the person who runs this Keyward for an account. If you have one already, <a href="/dashboard/sign-in">sign in</a>.</p>`,
  );
}

/** An anonymous form posted without this browser's token: back to sign-in for a fresh one. */
export function expiredAnonymousForm(): string {
  return publicPage('Form expired', html`<p>This form could not be verified. <a href="/dashboard/sign-in">Reload it</a> and try again.</p>`);
}
