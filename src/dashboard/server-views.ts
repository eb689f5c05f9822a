/**
 * What the Servers pages show (server-pages.ts has the routes): the account's servers with the create
 * form, one server's Overview tab, and the frame every tab of a server shares (its tabs, its
 * breadcrumbs). A new or rotated key is passed in only by the POST that made it. Each form is drawn
 * only for a role that may use it (role-views.ts).
 */

import type { Branding } from '../services/branding/branding.js';
import { type AccountServerRow, type LiveServerKey, SERVER_MODES, type ServerMode } from '../services/servers/servers.js';
import { html, type SafeHtml } from '../web/html.js';
import { brandingPanel } from './branding-views.js';
import { timeOf } from './display-format.js';
import { checkboxField, type FieldErrors, formError, selectField, shownOnce, textField } from './forms.js';
import { type Breadcrumb, csrfField, dashboardPage, onceField, type PageContext } from './layout-views.js';
import { may, roleNote } from './role-views.js';
import type { AccountServer } from './server-access.js';

const MODE_LABELS: Record<ServerMode, string> = { business: 'Business', personal: 'Personal' };
const MODE_OPTIONS = SERVER_MODES.map((m) => ({ value: m, label: MODE_LABELS[m] }));
const MODE_HINT = 'Business mode has an audience of your end users, managed through the API. Personal mode has no audience.';

/** The grace periods offered by "Rotate key"; the service takes any 0 to 7 days, the page offers these. */
export const GRACE_OPTIONS = [
  { value: '0', label: 'No grace: the old key stops at once' },
  { value: '3600', label: '1 hour' },
  { value: '86400', label: '24 hours' },
  { value: '604800', label: '7 days' },
];
// A mis-click on "Rotate key" must not cut production off at once, so the form starts on a day's grace.
const DEFAULT_GRACE = '86400';

export type ServerTab = 'overview' | 'providers' | 'audience' | 'webhooks';

/** The tabs of one server's pages. */
function serverTabs(server: AccountServer, active: ServerTab): SafeHtml {
  const tabs: { id: ServerTab; label: string; href: string }[] = [
    { id: 'overview', label: 'Overview', href: `/dashboard/servers/${server.id}` },
    { id: 'providers', label: 'Providers', href: `/dashboard/servers/${server.id}/providers` },
    { id: 'audience', label: 'Audience', href: `/dashboard/servers/${server.id}/audience` },
    { id: 'webhooks', label: 'Webhooks', href: `/dashboard/servers/${server.id}/webhooks` },
  ];
  return html`<nav class="tabs" aria-label="Server">${tabs.map(
    (t) => html`<a href="${t.href}"${t.id === active ? html` aria-current="page"` : ''}>${t.label}</a>`,
  )}</nav>`;
}

/** Servers, then (below a server's Overview) the server, then any page of its tab the page sits under. */
export function serverCrumbs(server?: AccountServer, under?: Breadcrumb): Breadcrumb[] {
  return [
    { label: 'Servers', href: '/dashboard/servers' },
    ...(server ? [{ label: server.name, href: `/dashboard/servers/${server.id}` }] : []),
    ...(under ? [under] : []),
  ];
}

/** A page of one of a server's tabs other than Overview: the tabs above the body. */
export function serverTabPage(
  context: PageContext,
  server: AccountServer,
  page: { tab: ServerTab; title: string; body: SafeHtml; notice?: string | null; under?: Breadcrumb },
): string {
  return dashboardPage(context, {
    title: page.title,
    section: 'servers',
    notice: page.notice,
    breadcrumbs: serverCrumbs(server, page.under),
    body: html`${serverTabs(server, page.tab)}
${page.body}`,
  });
}

function modeBadge(mode: ServerMode): SafeHtml {
  return html`<span class="badge${mode === 'business' ? ' ok' : ''}">${MODE_LABELS[mode]}</span>`;
}

/** What a refused form sends back: the values typed and the errors beside their fields. */
export interface ServerFormState {
  values?: Record<string, string>;
  errors?: FieldErrors;
  problem?: string;
}

export function serversPage(context: PageContext, servers: AccountServerRow[], form: ServerFormState = {}): string {
  const values = form.values ?? {};
  const errors = form.errors ?? {};
  const mayCreate = may(context, 'servers.create');
  const table = servers.length
    ? html`<table>
<thead><tr><th scope="col">Name</th><th scope="col">Mode</th><th scope="col">Created</th><th scope="col">Current key</th></tr></thead>
<tbody>${servers.map(
        (s) =>
          html`<tr><td><a href="/dashboard/servers/${s.id}">${s.name}</a></td><td>${modeBadge(s.mode)}</td><td>${timeOf(s.createdAt)}</td><td><code>${s.keyHint ?? '—'}</code></td></tr>`,
      )}</tbody>
</table>`
    : mayCreate
      ? html`<p class="empty">No servers yet. Create one to get its server API key.</p>`
      : html`<p class="empty">No servers yet.</p>`;
  const create = mayCreate
    ? html`<section class="panel" aria-labelledby="servers-create"><h2 id="servers-create">Create a server</h2>
${formError(form.problem)}
<form method="post" action="/dashboard/servers" novalidate>${csrfField(context.csrf)}${onceField(context.once)}
${textField({ name: 'name', label: 'Name', value: values.name, required: true, maxLength: 100, errors })}
${selectField({ name: 'mode', label: 'Mode', value: values.mode ?? 'business', options: MODE_OPTIONS, hint: MODE_HINT, required: true, errors })}
<div class="form-actions"><button type="submit">Create server</button></div>
</form></section>`
    : '';
  return dashboardPage(context, {
    title: 'Servers',
    section: 'servers',
    body: html`<section class="panel" aria-labelledby="servers-list"><h2 id="servers-list">Your servers</h2>${table}</section>
${create}`,
  });
}

/** The control's name on the Overview page (CONTRACT 8.2), and what turning it off does, in one line. */
export const SECRETS_READABLE_LABEL = 'Credentials can be read through the API';
const SECRETS_READABLE_HINT =
  'Turned off, GET /v1/end-users/{externalUserId} answers each credential without its secrets ("secretsWithheld": true), and credentials are used only through the gateway’s proxy.';

function secretsBadge(readable: boolean): SafeHtml {
  return readable ? html`<span class="badge">Readable through the API</span>` : html`<span class="badge">Withheld: write-only</span>`;
}

export interface OverviewState extends ServerFormState {
  notice?: string | null;
  /** A key to show once: only in the answer to the POST that made it. */
  secret?: { label: string; value: string };
}

/** `secretsReadable`: whether the member read answers credentials with their secrets (CONTRACT 8.2). */
export function overviewPage(
  context: PageContext,
  server: AccountServer,
  settings: { keys: LiveServerKey[]; uris: string[]; secretsReadable: boolean; branding?: Branding },
  state: OverviewState = {},
): string {
  const { keys, uris, secretsReadable } = settings;
  const values = state.values ?? {};
  const errors = state.errors ?? {};
  const current = keys.filter((k) => k.expiresAt === null);
  const inGrace = keys.filter((k) => k.expiresAt !== null);

  const details = html`<section class="panel" aria-labelledby="server-details"><h2 id="server-details">Details</h2>
<table><tbody>
<tr><th scope="row">Name</th><td>${server.name}</td></tr>
<tr><th scope="row">Server ID</th><td><code>${server.id}</code></td></tr>
<tr><th scope="row">Mode</th><td>${modeBadge(server.mode)}</td></tr>
<tr><th scope="row">Secrets</th><td>${secretsBadge(secretsReadable)}</td></tr>
<tr><th scope="row">Created</th><td>${timeOf(server.created_at)}</td></tr>
</tbody></table></section>`;

  // The Details table already shows the mode and the secrets' setting: a role that may not change them sees only that.
  const mode = may(context, 'servers.mode')
    ? html`<section class="panel" aria-labelledby="server-mode"><h2 id="server-mode">Mode</h2>
<form method="post" action="/dashboard/servers/${server.id}/mode" novalidate>${csrfField(context.csrf)}
${selectField({ name: 'mode', label: 'Mode', value: server.mode, options: MODE_OPTIONS, hint: MODE_HINT, required: true, errors })}
<div class="form-actions"><button type="submit" class="secondary">Change mode</button></div>
</form></section>`
    : '';

  const secrets = may(context, 'servers.secrets_readable')
    ? html`<section class="panel" aria-labelledby="server-secrets"><h2 id="server-secrets">Reading credentials</h2>
<form method="post" action="/dashboard/servers/${server.id}/secrets-readable" novalidate>${csrfField(context.csrf)}
${checkboxField({ name: 'readable', value: 'true', label: SECRETS_READABLE_LABEL, checked: secretsReadable, hint: SECRETS_READABLE_HINT, errors })}
<div class="form-actions"><button type="submit" class="secondary">Save</button></div>
</form></section>`
    : '';

  const graceTable = inGrace.length
    ? html`<h3>Old keys still working</h3>
<table><thead><tr><th scope="col">Key</th><th scope="col">Made</th><th scope="col">Stops working</th></tr></thead>
<tbody>${inGrace.map((k) => html`<tr><td><code>${k.hint}</code></td><td>${timeOf(k.createdAt)}</td><td>${timeOf(k.expiresAt!)}</td></tr>`)}</tbody></table>`
    : '';
  const key = html`<section class="panel" aria-labelledby="server-key"><h2 id="server-key">Server API key</h2>
<p>Current key: ${current.length ? current.map((k) => html`<code>${k.hint}</code> <span class="muted">(made ${timeOf(k.createdAt)})</span> `) : html`<span class="muted">none</span>`}</p>
${graceTable}
${
  may(context, 'server_keys.rotate')
    ? html`<form method="post" action="/dashboard/servers/${server.id}/rotate-key" novalidate>${csrfField(context.csrf)}${onceField(context.once)}
${selectField({
  name: 'grace',
  label: 'Grace period',
  hint: 'How long the current key keeps working after the new one is made, while you deploy it.',
  value: values.grace ?? DEFAULT_GRACE,
  options: GRACE_OPTIONS,
  required: true,
  errors,
})}
<div class="form-actions"><button type="submit" class="secondary">Rotate key</button></div>
</form>`
    : roleNote(context, 'can see the key’s hint but not rotate the key.')
}</section>`;

  const manageUris = may(context, 'redirect_uris.manage');
  const uriList = uris.length
    ? html`<table><thead><tr><th scope="col">Redirect URI</th>${manageUris ? html`<th scope="col"><span class="visually-hidden">Actions</span></th>` : ''}</tr></thead>
<tbody>${uris.map(
        // The button's name stays "Remove"; the URI it removes is its description for screen readers.
        (uri, i) =>
          html`<tr><td><code id="redirect-uri-${i}">${uri}</code></td>${
            manageUris
              ? html`<td class="actions"><form method="post" action="/dashboard/servers/${server.id}/redirect-uris/remove">${csrfField(context.csrf)}<input type="hidden" name="uri" value="${uri}"><button type="submit" class="secondary" aria-describedby="redirect-uri-${i}">Remove</button></form></td>`
              : ''
          }</tr>`,
      )}</tbody></table>`
    : manageUris
      ? html`<p class="empty">No redirect URIs yet. Add your app's address below so Keyward can send end users back to it after they connect.</p>`
      : html`<p class="empty">No redirect URIs yet.</p>`;
  const redirects = html`<section class="panel" aria-labelledby="server-redirects"><h2 id="server-redirects">Allowed redirect URIs</h2>
<p class="muted">Where Keyward may send an end user's browser after a connection (the <code>redirectUri</code> your backend passes), compared exactly.</p>
${uriList}
${
  manageUris
    ? html`<form method="post" action="/dashboard/servers/${server.id}/redirect-uris" class="inline-form" novalidate>${csrfField(context.csrf)}
${textField({ name: 'uri', label: 'Redirect URI', type: 'url', value: values.uri, required: true, maxLength: 2048, hint: 'An absolute http(s) URL without a fragment.', errors })}
<button type="submit">Add redirect URI</button>
</form>`
    : ''
}</section>`;

  return dashboardPage(context, {
    title: server.name,
    section: 'servers',
    breadcrumbs: serverCrumbs(),
    notice: state.notice,
    body: html`${serverTabs(server, 'overview')}
${state.secret ? shownOnce(state.secret.label, state.secret.value) : ''}
<div class="columns">${details}${mode}</div>
${secrets}
${key}
${redirects}
${settings.branding ? brandingPanel(server, settings.branding) : ''}`,
  });
}
