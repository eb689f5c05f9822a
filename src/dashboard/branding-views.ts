/**
 * A server's "Branding" page (branding-pages.ts has the routes), reached from its Overview: what its
 * end users see on the Connect page, the hosted form and the OAuth pages (CONTRACT 10), and, for a role
 * that may change it, the form (display name, accent colour, logo upload) and "Remove logo".
 */
import type { Branding } from '../services/branding/branding.js';
import { MAX_DISPLAY_NAME_LENGTH } from '../services/branding/branding-changes.js';
import { html, type SafeHtml } from '../web/html.js';
import { fileField, formError, textField } from './forms.js';
import { csrfField, type PageContext } from './layout-views.js';
import { may, roleNote } from './role-views.js';
import type { AccountServer } from './server-access.js';
import type { ServerFormState } from './server-views.js';

export const brandingUrl = (server: AccountServer) => `/dashboard/servers/${server.id}/branding`;

/** The branding as a table: each of the three, or what a page shows without it. */
function brandingTable(branding: Branding): SafeHtml {
  return html`<table><tbody>
<tr><th scope="row">Display name</th><td>${branding.displayName ?? html`<span class="muted">None: the pages show no name</span>`}</td></tr>
<tr><th scope="row">Accent colour</th><td>${branding.accentColor ? html`<code>${branding.accentColor}</code>` : html`<span class="muted">None: Keyward's blue</span>`}</td></tr>
<tr><th scope="row">Logo</th><td>${branding.logoUrl ? html`<img class="logo-preview" src="${branding.logoUrl}" alt="The current logo">` : html`<span class="muted">None</span>`}</td></tr>
</tbody></table>`;
}

/** The Overview's summary of the branding, with the way to its page. */
export function brandingPanel(server: AccountServer, branding: Branding): SafeHtml {
  return html`<section class="panel" aria-labelledby="server-branding"><h2 id="server-branding">Branding</h2>
<p class="muted">What your end users see on the Connect page, the hosted form and the OAuth pages.</p>
${brandingTable(branding)}
<p><a href="${brandingUrl(server)}">Branding</a></p>
</section>`;
}

/** The Branding page's body: what the end users see, then the form where the role may use it (server-views' frame goes around it). */
export function brandingBody(context: PageContext, server: AccountServer, branding: Branding, state: ServerFormState = {}): SafeHtml {
  const errors = state.errors ?? {};
  const values = state.values ?? {};
  const form = may(context, 'servers.branding')
    ? html`<section class="panel" aria-labelledby="branding-change"><h2 id="branding-change">Change the branding</h2>
${formError(state.problem)}
<form method="post" action="${brandingUrl(server)}" enctype="multipart/form-data" novalidate>${csrfField(context.csrf)}
${textField({
  name: 'displayName',
  label: 'Display name',
  value: values.displayName ?? branding.displayName ?? '',
  maxLength: MAX_DISPLAY_NAME_LENGTH,
  hint: 'The name your end users know your app by, at the top of their pages. Leave empty for none.',
  errors,
})}
${textField({
  name: 'accentColor',
  label: 'Accent colour',
  value: values.accentColor ?? branding.accentColor ?? '',
  maxLength: 7,
  hint: 'The colour of buttons and links, as #rrggbb (for example #0f766e). Leave empty for Keyward’s blue.',
  errors,
})}
${fileField({
  name: 'logo',
  label: 'Logo',
  accept: 'image/png,image/svg+xml',
  hint: 'A PNG or an SVG of at most 64 KiB; an SVG may not hold scripts, event handlers or references to other files. Leave empty to keep the current logo.',
  errors,
})}
<div class="form-actions"><button type="submit">Save branding</button></div>
</form>
${
  branding.logoUrl
    ? html`<form method="post" action="${brandingUrl(server)}/remove-logo" class="inline-form">${csrfField(context.csrf)}<button type="submit" class="secondary">Remove logo</button></form>`
    : ''
}</section>`
    : roleNote(context, 'can see the branding but not change it.');
  return html`<section class="panel" aria-labelledby="branding-now"><h2 id="branding-now">What your end users see</h2>
<p class="muted">On the Connect page, the hosted form and the OAuth pages.</p>
${brandingTable(branding)}
</section>
${form}`;
}
