/**
 * What the "Audit" page shows (audit-pages.ts has the route): one row per event, newest first, each
 * action told as a sentence from its detail. Event details hold labels, hints, slugs and ids, never a
 * secret; they are rendered as text by the escaping `html` template.
 */
import { html, type SafeHtml } from '../web/html.js';
import { duration, hintAside, timeOf } from './display-format.js';
import { dashboardPage, type PageContext } from './layout-views.js';

export interface EventRow {
  id: string;
  action: string;
  actor: string;
  detail: string;
  created_at: string;
  server_id: string | null;
  server_name: string | null;
}

/** The "What" column: one sentence per action, from the event's detail (text only, escaped by `html`). */
function describe(event: EventRow, providerName: (slug: string) => string): SafeHtml {
  let d: Record<string, unknown> = {};
  try {
    d = JSON.parse(event.detail) as Record<string, unknown>;
  } catch {
    // A detail that is not JSON is shown as the bare action below.
  }
  const text = (name: string) => (typeof d[name] === 'string' ? (d[name] as string) : '');
  const provider = providerName;
  const server = event.server_name ?? 'a deleted server';
  const hint = hintAside;
  switch (event.action) {
    case 'account_key.created':
      return html`Generated account API key ${text('label')}${hint(text('hint'))}`;
    case 'account_key.revoked':
      return html`Revoked account API key ${text('label')}${hint(text('hint'))}`;
    case 'account_key.browser_exposure':
      return html`Account API key ${text('hint')} was sent from a browser at ${text('origin')} and refused`;
    case 'server.created':
      return html`Created server ${text('name') || server} (${text('mode')} mode)`;
    case 'server.mode_changed':
      return html`Changed mode to ${text('to')} (was ${text('from')})`;
    case 'server.secrets_readable_changed':
      return d.to === false
        ? html`Made ${server} write-only: credentials can no longer be read through the API`
        : html`Let credentials of ${server} be read through the API again`;
    case 'server_key.rotated': {
      const grace = typeof d.graceSeconds === 'number' ? d.graceSeconds : 0;
      return html`Rotated the server key of ${server}${hint(text('keyHint'))}; ${
        grace > 0 ? `the old key stayed valid for ${duration(grace)}` : 'the old key stopped at once'
      }`;
    }
    case 'server.redirect_uri_allowed':
      return html`Allowed redirect URI ${text('uri')} on ${server}`;
    case 'server.redirect_uri_removed':
      return html`Removed redirect URI ${text('uri')} from ${server}`;
    case 'provider.enabled':
      return html`Enabled provider ${provider(text('provider'))}`;
    case 'provider.added':
      return html`Added custom ${text('kind') === 'static' ? 'static' : 'OAuth'} provider ${text('provider')}`;
    case 'credential.connected':
      return html`Connected the ${provider(text('provider'))} credential of end user ${text('externalUserId')}`;
    case 'credential.replaced':
      return html`Replaced the ${provider(text('provider'))} credential of end user ${text('externalUserId')}`;
    case 'credential.revoked':
      return html`Revoked the ${provider(text('provider'))} credential of end user ${text('externalUserId')}`;
    case 'credential.checked':
      return html`Checked the ${provider(text('provider'))} credential of end user ${text('externalUserId')} at the provider: ${text('outcome')}`;
    case 'end_user.removed':
      return html`Removed end user ${text('externalUserId')} from the audience`;
    case 'webhook.added':
      return html`Added webhook endpoint ${text('url')} (${Array.isArray(d.events) ? `events: ${(d.events as unknown[]).join(', ')}` : 'all events'})`;
    case 'webhook.removed':
      return html`Removed webhook endpoint ${text('url')}`;
    case 'webhook.secret_rotated': {
      const grace = typeof d.graceSeconds === 'number' ? d.graceSeconds : 0;
      const endpoint = text('url') || 'a webhook endpoint';
      return html`Rotated the signing secret of ${endpoint}; ${grace > 0 ? `the old secret kept signing for ${duration(grace)}` : 'the old secret stopped at once'}`;
    }
    case 'webhook.message_resent':
      return html`Resent a failed webhook message to endpoint <span class="mono">${text('webhookId')}</span>`;
    case 'user.password_set':
      return html`Set the dashboard password of ${text('email')}`;
    default:
      return html`${event.action}`;
  }
}

/** One page of events; `newest` says whether this is the first page, `older` links to the next. */
export function auditPage(
  context: PageContext,
  view: { events: EventRow[]; names: Map<string, string>; providerName: (slug: string) => string; newest: boolean; older: string | null },
): string {
  const { events, names, older } = view;
  const later = !view.newest;
  const table = html`<table class="audit">
<caption class="muted">Newest first. Times are in UTC.</caption>
<thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Server</th></tr></thead>
<tbody>
${events.map(
  (e) => html`<tr>
<td>${timeOf(e.created_at)}</td>
<td>${names.get(e.actor)}</td>
<td>${describe(e, view.providerName)}</td>
<td>${e.server_id && e.server_name ? html`<a href="/dashboard/servers/${e.server_id}">${e.server_name}</a>` : html`<span class="muted">—</span>`}</td>
</tr>`,
)}
</tbody>
</table>`;
  const empty = later
    ? html`<p class="empty">No older events. <a href="/dashboard/audit">Back to the newest events</a>.</p>`
    : html`<p class="empty">Nothing has happened in this account yet. Generate an account API key under <a href="/dashboard/developer/api-keys">Developer → Account API Keys</a> or create a server under <a href="/dashboard/servers">Servers</a>, and it will be listed here.</p>`;
  const pager =
    later || older
      ? html`<nav class="pager" aria-label="Audit pages">${later ? html`<a href="/dashboard/audit">Newest events</a>` : ''}${
          older ? html`<a href="${older}">Older events</a>` : ''
        }</nav>`
      : '';
  const body = html`<p class="muted">Who generated or revoked account API keys, created servers, changed their mode, rotated their keys, changed their allowed redirect URIs, enabled providers, connected or revoked end users' credentials, removed end users, and changed webhook endpoints.</p>
<section class="panel" aria-label="Audit events">
${events.length ? table : empty}
</section>
${pager}`;
  return dashboardPage(context, { title: 'Audit', section: 'audit', body });
}
