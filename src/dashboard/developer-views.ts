/**
 * What "Developer" → "Account API Keys" shows (developer-pages.ts has the routes): the account's keys
 * (hints only), the "Generate Key" form, a new key once (only in the answer to the POST that made it),
 * and the confirmation before a key is revoked. "Generate Key" and "Revoke" are drawn only for a role
 * that may manage the keys (role-views.ts).
 */
import type { AccountKeyView } from '../services/keys/account-keys.js';
import { ENVIRONMENTS } from '../services/keys/account-keys.js';
import { html, type SafeHtml } from '../web/html.js';
import { timeOf } from './display-format.js';
import { type FieldErrors, formError, selectField, shownOnce, textField } from './forms.js';
import { csrfField, dashboardPage, onceField, type PageContext } from './layout-views.js';
import { may, roleNote } from './role-views.js';

export const KEYS_URL = '/dashboard/developer/api-keys';
const CRUMBS = [{ label: 'Developer', href: '/dashboard/developer' }];

const ENVIRONMENT_LABELS: Record<string, string> = { production: 'Production', staging: 'Staging', development: 'Development', other: 'Other' };

export interface GenerateForm {
  values: { label: string; environment: string; expiresAt: string };
  errors: FieldErrors;
  problem?: string;
}

const EMPTY_GENERATE_FORM: GenerateForm = { values: { label: '', environment: 'production', expiresAt: '' }, errors: {} };

function status(key: AccountKeyView, now: string): { text: 'Active' | 'Revoked' | 'Expired'; badge: string } {
  if (key.revokedAt) return { text: 'Revoked', badge: 'bad' };
  if (key.expiresAt && key.expiresAt <= now) return { text: 'Expired', badge: 'warn' };
  return { text: 'Active', badge: 'ok' };
}

function generateForm(context: PageContext, form: GenerateForm): SafeHtml {
  const { values, errors } = form;
  return html`<section class="panel" aria-labelledby="generate-title">
<h2 id="generate-title">Generate a new key</h2>
${formError(form.problem)}
<form method="post" action="${KEYS_URL}" novalidate>
${csrfField(context.csrf)}${onceField(context.once)}
${textField({ name: 'label', label: 'Label', required: true, maxLength: 100, value: values.label, hint: 'What uses this key, such as "Billing backend". 1 to 100 characters.', errors })}
${selectField({
  name: 'environment',
  label: 'Environment',
  required: true,
  value: values.environment || 'production',
  options: ENVIRONMENTS.map((e) => ({ value: e, label: ENVIRONMENT_LABELS[e]! })),
  errors,
})}
${textField({
  name: 'expiresAt',
  label: 'Expires at',
  type: 'datetime-local',
  value: values.expiresAt,
  hint: 'In UTC, not your local time, and in the future. Leave it empty for a key that does not expire.',
  errors,
})}
<div class="form-actions"><button type="submit">Generate Key</button></div>
</form>
</section>`;
}

/** `actions`: whether the rows carry "Revoke" (the user's role may manage the keys). */
function keyRows(keys: AccountKeyView[], names: Map<string, string>, now: string, actions: boolean): SafeHtml[] {
  return keys.map((key) => {
    const state = status(key, now);
    const exposure = key.browserExposure;
    return html`<tr>
<td>${key.label}</td>
<td>${ENVIRONMENT_LABELS[key.environment] ?? key.environment}</td>
<td><code>${key.hint}</code></td>
<td>${names.get(key.createdBy)}<br><span class="muted">${timeOf(key.createdAt)}</span></td>
<td>${key.lastUsedAt ? timeOf(key.lastUsedAt) : 'Never'}</td>
<td>${key.expiresAt ? timeOf(key.expiresAt) : 'Never'}</td>
<td><span class="badge ${state.badge}">${state.text}</span>${key.revokedAt ? html`<br><span class="muted">${timeOf(key.revokedAt)}</span>` : ''}</td>
${
  actions
    ? html`<td class="actions">${
        // A GET form: the button only opens the confirmation page, whose POST form carries the CSRF token
        // (a token in a GET URL would end up in history and logs). An expired key can be revoked too: it
        // still counts towards the limit of 50.
        key.revokedAt
          ? ''
          : html`<form method="get" action="${KEYS_URL}/${key.id}/revoke"><button type="submit" class="danger" aria-label="Revoke ${key.label}">Revoke</button></form>`
      }</td>`
    : ''
}
</tr>${
      exposure
        ? html`<tr class="exposure"><td colspan="${actions ? 8 : 7}"><p class="warning" role="note"><strong>${key.label}:</strong> Used from a browser at ${exposure.origin} on ${timeOf(
            exposure.at,
          )}${state.text === 'Active' ? ' — revoke it and generate a new one.' : '.'}</p></td></tr>`
        : ''
    }`;
  });
}

/** The keys page: the new key once when there is one, the guidance, the form, the list. */
export function keysPage(
  context: PageContext,
  view: { keys: AccountKeyView[]; names: Map<string, string>; now: string; form?: GenerateForm; newKey?: string; notice?: string | null },
): string {
  const { keys, names, now } = view;
  const options = view;
  const mayManage = may(context, 'account_keys.manage');
  const table = keys.length
    ? html`<table>
<thead><tr><th scope="col">Label</th><th scope="col">Environment</th><th scope="col">Key</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col">Status</th>${
        mayManage ? html`<th scope="col"><span class="muted">Actions</span></th>` : ''
      }</tr></thead>
<tbody>
${keyRows(keys, names, now, mayManage)}
</tbody>
</table>`
    : mayManage
      ? html`<p class="empty">No account API keys yet. Generate one to call the management API.</p>`
      : html`<p class="empty">No account API keys yet.</p>`;
  const body = html`${options.newKey ? shownOnce('New account API key', options.newKey) : ''}
<section class="panel">
<p>An account API key opens the management API for the whole account. Send it as <code>Authorization: Bearer …</code>, together with one server's key in <code>x-service-key</code>, which chooses the server.</p>
<p class="warning">Use it from your backends only — never in a browser, a mobile app or any code you ship to users. Keyward refuses calls made from a browser and flags the key here.</p>
<p class="muted">Generate one key per environment (production, staging, development), so one can be revoked without stopping the others. An account may have at most 50 keys that are not revoked.</p>
</section>
${mayManage ? generateForm(context, options.form ?? EMPTY_GENERATE_FORM) : ''}
<section class="panel" aria-labelledby="keys-title">
<h2 id="keys-title">Keys</h2>
${table}
${mayManage ? '' : roleNote(context, 'can see these keys but not change them.')}
</section>`;
  return dashboardPage(context, { title: 'Account API Keys', section: 'developer', breadcrumbs: CRUMBS, notice: options.notice, body });
}

/** "Developer": where the keys and the API reference are. */
export function developerPage(context: PageContext): string {
  const body = html`<section class="panel">
<p>Your backends call Keyward's management API to start connections for your end users and to read or revoke their credentials. Each call carries an account API key and a server key.</p>
<ul class="link-list">
<li><a href="${KEYS_URL}">Account API Keys</a> — generate and revoke the keys your backends use.</li>
<li><a href="/openapi.json">API reference</a> — the OpenAPI document of every route, its fields and its errors.</li>
</ul>
</section>`;
  return dashboardPage(context, { title: 'Developer', section: 'developer', body });
}

/** "Revoke account API key", confirmed by a POST form. */
export function revokeKeyPage(context: PageContext, key: { id: string; label: string; hint: string }): string {
  const body = html`<section class="panel">
<p>Revoke key <strong>${key.label}</strong> (<code>${key.hint}</code>)? Backends using it stop working at once.</p>
<form method="post" action="${KEYS_URL}/${key.id}/revoke">
${csrfField(context.csrf)}
<div class="form-actions"><button type="submit" class="danger">Revoke</button><a href="${KEYS_URL}">Cancel</a></div>
</form>
</section>`;
  return dashboardPage(context, {
    title: 'Revoke account API key',
    section: 'developer',
    breadcrumbs: [...CRUMBS, { label: 'Account API Keys', href: KEYS_URL }],
    body,
  });
}
