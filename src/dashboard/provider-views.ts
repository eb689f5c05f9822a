/**
 * What a server's Providers tab shows: the enabled providers and the three forms that add one. Kept
 * apart from the routes (provider-pages.ts) so each file reads on its own. Field names differ between
 * the forms (clientId / oauthClientId …) because a field's id is derived from its name, and ids must be
 * unique on the page for the labels to point at the right control. The three forms are drawn only
 * for a role that may manage providers (role-views.ts).
 */

import { OAUTH_PROVIDERS, STATIC_PROVIDERS } from '../catalog/catalog.js';
import type { EnabledProviderView } from '../services/providers/server-providers.js';
import { html, type SafeHtml } from '../web/html.js';
import { kindLabel, shownDate } from './display-format.js';
import { type FieldErrors, formError, selectField, textArea, textField } from './forms.js';
import { csrfField, type PageContext } from './layout-views.js';
import { may, roleNote } from './role-views.js';

/** Which form a refused POST came from: only that one is re-rendered with its values and errors. */
export type ProviderForm = 'enable' | 'custom-oauth' | 'custom-static';

export interface RefusedForm {
  form: ProviderForm;
  /** What was typed, secrets already left out. */
  values: Record<string, string>;
  errors: FieldErrors;
  problem?: string;
}

function scopesCell(p: EnabledProviderView): SafeHtml {
  if (p.kind === 'static') return html`<span class="muted">—</span>`;
  const list = p.scopes.length ? p.scopes.join(' ') : html`<span class="muted">none</span>`;
  return p.defaultScopes ? html`${list} <span class="muted">(defaults)</span>` : html`${list}`;
}

/** Proxy: the gateway can call its API; Checked: its static credentials are checked when typed (CONTRACT 8.5). */
function yesOrDash(fact: boolean): SafeHtml {
  return fact ? html`Yes` : html`<span class="muted">—</span>`;
}

/** What the legend under the table says the two columns mean. */
const GATEWAY_LEGEND =
  'Proxy: calls to the provider’s API can go through Keyward’s gateway with the stored credential. Checked: static credentials are checked with the provider when they are typed.';

function providersTable(providers: EnabledProviderView[], mayManage: boolean): SafeHtml {
  if (providers.length === 0) {
    return mayManage
      ? html`<p class="empty">No providers enabled yet. Enable one from the catalog below, or add a custom provider.</p>`
      : html`<p class="empty">No providers enabled yet.</p>`;
  }
  const rows = providers.map(
    (p) => html`<tr>
<th scope="row">${p.name}${p.custom ? html` <span class="badge">Custom</span>` : ''}</th>
<td><code>${p.slug}</code></td>
<td>${kindLabel(p.kind)}</td>
<td>${p.kind === 'oauth2' ? html`<code>${p.clientId ?? '—'}</code>` : html`<span class="muted">—</span>`}</td>
<td>${scopesCell(p)}</td>
<td>${shownDate(p.enabledAt)}</td>
<td>${yesOrDash(p.proxy)}</td>
<td>${yesOrDash(p.checked)}</td>
</tr>`,
  );
  return html`<table class="row-headed">
<thead><tr><th scope="col">Provider</th><th scope="col">Slug</th><th scope="col">Kind</th><th scope="col">Client ID</th><th scope="col">Scopes</th><th scope="col">Enabled</th><th scope="col">Proxy</th><th scope="col">Checked</th></tr></thead>
<tbody>${rows}</tbody>
</table>
<p class="muted">${GATEWAY_LEGEND}</p>`;
}

/** The catalog as one select, each option saying its kind, OAuth providers first. */
const CATALOG_OPTIONS = [
  { value: '', label: 'Choose a provider' },
  ...OAUTH_PROVIDERS.map((p) => ({ value: p.slug, label: `${p.name} (OAuth)` })),
  ...STATIC_PROVIDERS.map((p) => ({ value: p.slug, label: `${p.name} (static API key)` })),
];

function stateOf(refused: RefusedForm | null, form: ProviderForm): { values: Record<string, string>; errors: FieldErrors; problem?: string } {
  return refused?.form === form ? refused : { values: {}, errors: {} };
}

function enableForm(action: string, csrf: string, callbackUrl: string, refused: RefusedForm | null): SafeHtml {
  const { values: v, errors, problem } = stateOf(refused, 'enable');
  return html`<section class="panel" aria-labelledby="enable-title">
<h2 id="enable-title">Enable a provider</h2>
<p class="muted">An OAuth provider needs the client of your own OAuth app at that provider. Register this callback URL in it:
<code>${callbackUrl}</code>. A static provider needs nothing more: your end users type their own keys in Keyward's form.</p>
${formError(problem)}
<form method="post" action="${action}" novalidate>
${csrfField(csrf)}
${selectField({ name: 'provider', label: 'Provider', value: v.provider, options: CATALOG_OPTIONS, required: true, errors })}
${textField({ name: 'clientId', label: 'Client ID', value: v.clientId, hint: 'Needed for an OAuth provider; leave empty for a static one.', autocomplete: 'off', errors })}
${textField({ name: 'clientSecret', label: 'Client secret', type: 'password', hint: 'Needed for an OAuth provider. Stored encrypted and never shown again.', autocomplete: 'new-password', errors })}
${textField({ name: 'scopes', label: 'Scopes', value: v.scopes, hint: "OAuth providers only. Comma or space separated; leave empty for the provider's defaults.", autocomplete: 'off', errors })}
<div class="form-actions"><button type="submit">Enable provider</button></div>
</form>
</section>`;
}

/**
 * The provider's API for the gateway (CONTRACT 3 and 8.5), all optional: its base URL and other hosts,
 * and for a static provider how the values are sent and the request that checks them. Named with the
 * form's prefix (oauthApiBaseUrl, staticApiBaseUrl…) so each id is unique on the page.
 */
function apiFields(prefix: 'oauth' | 'static', v: Record<string, string>, errors: FieldErrors, isStatic: boolean): SafeHtml {
  const base = `${prefix}ApiBaseUrl`;
  const hosts = `${prefix}ApiHosts`;
  return html`<h3>For the gateway</h3>
<p class="muted">Leave these empty if calls to this provider's API are not to go through Keyward.</p>
${textField({ name: base, label: 'API base URL', type: 'url', value: v[base], hint: 'Where proxied calls go, e.g. https://api.example.com. Paths are appended to it.', autocomplete: 'off', errors })}
${textArea({
  name: hosts,
  label: 'API hosts',
  value: v[hosts],
  rows: 2,
  hint: 'Other hosts a call may pick with the keyward-base-url header, comma or newline separated; *.example.com matches its subdomains.',
  errors,
})}
${
  isStatic
    ? html`${textField({
        name: 'auth',
        label: 'Auth',
        value: v.auth,
        hint: 'How the values are sent: bearer:apiKey, header:x-api-key:{apiKey}, basic:{user}:{password} or query:key:apiKey (names of the fields above). Needed with an API base URL.',
        autocomplete: 'off',
        errors,
      })}
${textField({ name: 'verify', label: 'Verify request', value: v.verify, hint: 'One cheap request whose 2xx means the values work, e.g. GET /v1/me.', autocomplete: 'off', errors })}`
    : ''
}`;
}

function customOAuthForm(action: string, csrf: string, refused: RefusedForm | null): SafeHtml {
  const { values: v, errors, problem } = stateOf(refused, 'custom-oauth');
  return html`<section class="panel" aria-labelledby="custom-oauth-title">
<h2 id="custom-oauth-title">Add a custom OAuth provider</h2>
<p class="muted">For a provider that is not in the catalog, or a self-hosted one. Its endpoints must be https.</p>
${formError(problem)}
<form method="post" action="${action}/custom-oauth" novalidate>
${csrfField(csrf)}
${textField({ name: 'oauthSlug', label: 'Slug', value: v.oauthSlug, required: true, hint: 'Lower-case letters, digits and -, as in /v1/oauth/{slug}/start.', autocomplete: 'off', maxLength: 63, errors })}
${textField({ name: 'oauthName', label: 'Name', value: v.oauthName, hint: 'Shown to your end users; the slug when empty.', maxLength: 100, errors })}
${textField({ name: 'authorizationUrl', label: 'Authorization URL', type: 'url', value: v.authorizationUrl, required: true, errors })}
${textField({ name: 'tokenUrl', label: 'Token URL', type: 'url', value: v.tokenUrl, required: true, errors })}
${textField({ name: 'revocationUrl', label: 'Revocation URL', type: 'url', value: v.revocationUrl, hint: 'An RFC 7009 endpoint, if the provider has one.', errors })}
${textField({ name: 'oauthClientId', label: 'Client ID', value: v.oauthClientId, required: true, autocomplete: 'off', errors })}
${textField({ name: 'oauthClientSecret', label: 'Client secret', type: 'password', required: true, hint: 'Stored encrypted and never shown again.', autocomplete: 'new-password', errors })}
${textField({ name: 'oauthScopes', label: 'Scopes', value: v.oauthScopes, hint: 'Comma or space separated.', autocomplete: 'off', errors })}
${selectField({
  name: 'tokenAuth',
  label: 'Client authentication',
  value: v.tokenAuth,
  required: true,
  hint: 'How Keyward sends the client secret to the token endpoint.',
  options: [
    { value: 'client_secret_basic', label: 'client_secret_basic (HTTP Basic)' },
    { value: 'client_secret_post', label: 'client_secret_post (in the form body)' },
  ],
  errors,
})}
${apiFields('oauth', v, errors, false)}
<div class="form-actions"><button type="submit">Add OAuth provider</button></div>
</form>
</section>`;
}

function customStaticForm(action: string, csrf: string, refused: RefusedForm | null): SafeHtml {
  const { values: v, errors, problem } = stateOf(refused, 'custom-static');
  return html`<section class="panel" aria-labelledby="custom-static-title">
<h2 id="custom-static-title">Add a custom static provider</h2>
<p class="muted">For an API that takes keys or tokens your end users type in Keyward's form.</p>
${formError(problem)}
<form method="post" action="${action}/custom-static" novalidate>
${csrfField(csrf)}
${textField({ name: 'staticSlug', label: 'Slug', value: v.staticSlug, required: true, hint: 'Lower-case letters, digits and -, as in /v1/credentials/static/{slug}/connect.', autocomplete: 'off', maxLength: 63, errors })}
${textField({ name: 'staticName', label: 'Name', value: v.staticName, hint: 'Shown to your end users; the slug when empty.', maxLength: 100, errors })}
${textArea({
  name: 'fields',
  label: 'Fields',
  value: v.fields,
  required: true,
  rows: 4,
  hint: 'One field per line as name:Label[:secret][:optional], e.g. apiKey:API key:secret',
  errors,
})}
${apiFields('static', v, errors, true)}
<div class="form-actions"><button type="submit">Add static provider</button></div>
</form>
</section>`;
}

/** The whole tab body below the server's tabs. */
export function providersBody(input: {
  action: string;
  context: PageContext;
  callbackUrl: string;
  providers: EnabledProviderView[];
  refused: RefusedForm | null;
}): SafeHtml {
  const { context } = input;
  const mayManage = may(context, 'providers.manage');
  const list = html`<section class="panel" aria-labelledby="enabled-title">
<div class="panel-head"><h2 id="enabled-title">Enabled providers</h2></div>
${providersTable(input.providers, mayManage)}
${mayManage ? '' : roleNote(context, 'can see the providers but not enable or add one.')}
</section>`;
  if (!mayManage) return list;
  return html`${list}
${enableForm(input.action, context.csrf, input.callbackUrl, input.refused)}
<div class="columns">
${customOAuthForm(input.action, context.csrf, input.refused)}
${customStaticForm(input.action, context.csrf, input.refused)}
</div>`;
}
