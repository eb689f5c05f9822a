/**
 * What single sign-on shows (CONTRACT 9). Signed in (sso-pages.ts): Team → "Single sign-on", the
 * account's OpenID Connect provider (issuer URL, client id, client secret never shown back, allowed
 * email domains, default role), the redirect URI to register at the provider, "Require SSO" and
 * "Remove" behind a confirmation; each form drawn only for a role that may use it. Public
 * (sso-routes.ts): "Sign in with SSO" (email first), the page that sends the browser on to the
 * provider, and the callback's refusals.
 */
import type { SsoState } from '../services/sso/sso-settings.js';
import { SSO_JOIN_ROLES } from '../services/sso/sso-settings.js';
import { html, type SafeHtml } from '../web/html.js';
import { timeOf } from './display-format.js';
import { checkboxField, type FieldErrors, formError, selectField, textArea, textField } from './forms.js';
import { csrfField, dashboardPage, type PageContext, publicPage } from './layout-views.js';
import { may, roleNote } from './role-views.js';
import { ROLE_LABELS, TEAM_URL } from './team-views.js';

export const SSO_SETTINGS_URL = `${TEAM_URL}/sso`;
export const SSO_REQUIRE_URL = `${SSO_SETTINGS_URL}/require`;
export const SSO_REMOVE_URL = `${SSO_SETTINGS_URL}/remove`;
export const SSO_SIGN_IN_URL = '/dashboard/sso';
export const SSO_JOIN_URL = '/dashboard/sso/join';

const CRUMBS = [{ label: 'Team', href: TEAM_URL }];
const SSO_CRUMBS = [...CRUMBS, { label: 'Single sign-on', href: SSO_SETTINGS_URL }];

/** The settings form as sent (never the client secret) and what was refused in it. */
export interface SsoSettingsForm {
  values: { issuer: string; clientId: string; allowedDomains: string; defaultRole: string };
  errors: FieldErrors;
  problem?: string;
}

export interface SsoPageView {
  state: SsoState;
  redirectUri: string;
  form?: SsoSettingsForm;
  /** A refusal of "Require SSO", above its form. */
  requireProblem?: string;
  notice?: string | null;
}

function redirectUriPanel(redirectUri: string): SafeHtml {
  return html`<section class="panel" aria-labelledby="sso-redirect-title">
<h2 id="sso-redirect-title">Redirect URI</h2>
<p>Register this redirect URI (sometimes called the callback or reply URL) with your identity provider, for a web application using the authorization code flow:</p>
<div class="secret-row"><input id="sso-redirect-uri" class="secret" type="text" readonly value="${redirectUri}" aria-label="Redirect URI">
<button type="button" class="secondary" data-copy="sso-redirect-uri">Copy</button></div>
<p class="muted">Keyward asks for the <code>openid email</code> scopes, authenticates at the token endpoint with <code>client_secret_basic</code> (or <code>client_secret_post</code> where the provider offers only that), and trusts the ID token's <code>email</code> only with <code>email_verified: true</code>.</p>
</section>`;
}

function settingsForm(context: PageContext, view: SsoPageView): SafeHtml {
  const { settings } = view.state;
  const form: SsoSettingsForm = view.form ?? {
    values: {
      issuer: settings?.issuer ?? '',
      clientId: settings?.clientId ?? '',
      allowedDomains: settings?.allowedDomains.join(', ') ?? '',
      defaultRole: settings?.defaultRole ?? 'viewer',
    },
    errors: {},
  };
  const { values, errors } = form;
  return html`<section class="panel" aria-labelledby="sso-settings-title">
<h2 id="sso-settings-title">${settings ? 'Identity provider' : 'Connect an identity provider'}</h2>
${formError(form.problem)}
<form method="post" action="${SSO_SETTINGS_URL}" novalidate>
${csrfField(context.csrf)}
${textField({ name: 'issuer', label: 'Issuer URL', type: 'url', required: true, value: values.issuer, hint: 'Your provider’s OpenID Connect issuer, such as https://login.example.com. Keyward reads its discovery document when you save.', errors })}
${textField({ name: 'clientId', label: 'Client ID', required: true, maxLength: 255, value: values.clientId, errors })}
${textField({
  name: 'clientSecret',
  label: 'Client secret',
  type: 'password',
  required: !settings,
  autocomplete: 'off',
  hint: settings ? 'Kept sealed and never shown again. Leave empty to keep the current secret.' : 'Kept sealed and never shown again.',
  errors,
})}
${textArea({ name: 'allowedDomains', label: 'Allowed email domains', required: true, rows: 2, value: values.allowedDomains, hint: 'Separated by commas or spaces, such as example.com, example.org. People of these domains sign in through this provider.', errors })}
${selectField({
  name: 'defaultRole',
  label: 'Default role',
  required: true,
  value: values.defaultRole,
  options: SSO_JOIN_ROLES.map((r) => ({ value: r, label: ROLE_LABELS[r] })),
  hint: 'The role of a person who signs in for the first time and joins the account.',
  errors,
})}
<div class="form-actions"><button type="submit">${settings ? 'Save' : 'Connect'}</button></div>
</form>
</section>`;
}

/** The settings as text, for a role that may not change them. */
function settingsSummary(view: SsoPageView): SafeHtml {
  const { settings } = view.state;
  if (!settings) return html`<section class="panel"><p class="empty">No identity provider is connected: everyone signs in with a password.</p></section>`;
  return html`<section class="panel" aria-labelledby="sso-settings-title">
<h2 id="sso-settings-title">Identity provider</h2>
<table><tbody>
<tr><th scope="row">Issuer URL</th><td><code>${settings.issuer}</code></td></tr>
<tr><th scope="row">Client ID</th><td><code>${settings.clientId}</code></td></tr>
<tr><th scope="row">Allowed email domains</th><td>${settings.allowedDomains.join(', ')}</td></tr>
<tr><th scope="row">Default role</th><td>${ROLE_LABELS[settings.defaultRole]}</td></tr>
<tr><th scope="row">Require SSO</th><td>${view.state.required ? 'On: passwords are off for everyone but owners' : 'Off'}</td></tr>
<tr><th scope="row">Last changed</th><td>${timeOf(settings.updatedAt)}</td></tr>
</tbody></table>
</section>`;
}

function requirePanel(context: PageContext, view: SsoPageView): SafeHtml {
  return html`<section class="panel" aria-labelledby="sso-require-title">
<h2 id="sso-require-title">Require SSO</h2>
${formError(view.requireProblem)}
<form method="post" action="${SSO_REQUIRE_URL}">
${csrfField(context.csrf)}
${checkboxField({
  name: 'required',
  label: 'Require SSO',
  value: 'on',
  checked: view.state.required,
  hint: 'Passwords stop working for everyone in the account but its owners, who keep theirs as a break-glass. Everyone else signs in with “Sign in with SSO”.',
})}
<div class="form-actions"><button type="submit" class="secondary">Save policy</button></div>
</form>
</section>`;
}

function removePanel(): SafeHtml {
  // A GET form: the button opens the confirmation page, whose POST carries the CSRF token.
  return html`<section class="panel" aria-labelledby="sso-remove-title">
<h2 id="sso-remove-title">Remove</h2>
<p class="muted">Disconnects the identity provider: nobody can sign in through it any more, and Require SSO is turned off.</p>
<form method="get" action="${SSO_REMOVE_URL}"><button type="submit" class="danger">Remove</button></form>
</section>`;
}

/** Team → "Single sign-on". */
export function ssoPage(context: PageContext, view: SsoPageView): string {
  const configured = view.state.settings !== null;
  const admin = may(context, 'team.sso');
  const intro = html`<p>Connect your company’s OpenID Connect identity provider (Okta, Microsoft Entra ID, Google Workspace, Keycloak…). People whose email is of an allowed domain then sign in with “Sign in with SSO” on the sign-in page; someone new joins the account with the default role.</p>`;
  const body = html`${intro}
${admin ? settingsForm(context, view) : html`${settingsSummary(view)}${roleNote(context, 'can see single sign-on but not change it.')}`}
${redirectUriPanel(view.redirectUri)}
${admin && configured ? requirePanel(context, view) : ''}
${admin && configured ? removePanel() : ''}`;
  return dashboardPage(context, { title: 'Single sign-on', section: 'team', breadcrumbs: CRUMBS, notice: view.notice, body });
}

/** "Remove single sign-on", confirmed by a POST form. */
export function removeSsoPage(context: PageContext, issuer: string): string {
  const body = html`<section class="panel">
<p>Disconnect <strong>${issuer}</strong> from ${context.user.accountName}? Nobody can sign in through it any more; Require SSO is turned off, so everyone with a password can sign in with it again.</p>
<form method="post" action="${SSO_REMOVE_URL}">
${csrfField(context.csrf)}
<div class="form-actions"><button type="submit" class="danger">Remove</button><a href="${SSO_SETTINGS_URL}">Cancel</a></div>
</form>
</section>`;
  return dashboardPage(context, { title: 'Remove single sign-on', section: 'team', breadcrumbs: SSO_CRUMBS, body });
}

/** "Sign in with SSO": the email first, whose domain picks the account's provider. */
export function ssoSignInForm(csrf: string, email: string, errors: FieldErrors, problem?: string): string {
  return publicPage(
    'Sign in with SSO',
    html`${formError(problem)}
<p>Enter your work email: Keyward sends you to your company’s identity provider to sign in.</p>
<form method="post" action="${SSO_SIGN_IN_URL}" novalidate>
<input type="hidden" name="csrf" value="${csrf}">
${textField({ name: 'email', label: 'Email', type: 'email', value: email, required: true, autocomplete: 'username', errors })}
<button type="submit">Continue</button>
</form>
<p class="aside"><a href="/dashboard/sign-in">Sign in with a password</a></p>`,
  );
}

/**
 * The answer to the email form: the browser goes on to the provider by the page's Refresh header, or
 * by the link. Not a redirect: the dashboard's CSP allows forms to submit to itself only, and a
 * browser holds a redirect after a form's POST to that rule too.
 */
export function continueToProviderPage(authorizationUrl: string): string {
  return publicPage(
    'Continue to your identity provider',
    html`<p>Keyward is sending you to your company’s identity provider to sign in.</p>
<p><a href="${authorizationUrl}">Continue to sign in</a></p>`,
  );
}

/** A callback that signed nobody in: the sentence says why, never the provider's own words. */
export function ssoFailedPage(reason: string): string {
  return publicPage(
    'Single sign-on failed',
    html`<p>${reason}</p>
<p><a href="${SSO_SIGN_IN_URL}">Sign in with SSO</a> · <a href="/dashboard/sign-in">Sign in with a password</a></p>`,
  );
}

/** "Join with SSO" on an invitation's page: a form of its own, posting the link's token. */
export function joinWithSsoForm(csrf: string, token: string): SafeHtml {
  return html`<form method="post" action="${SSO_JOIN_URL}" class="sso-join">
<input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="token" value="${token}">
<p class="aside">Your company signs in with single sign-on: <button type="submit" class="secondary">Join with SSO</button></p>
</form>`;
}
