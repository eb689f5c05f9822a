/**
 * What the Webhooks tab shows (webhook-pages.ts has the routes): the endpoints with the "Add endpoint"
 * form, one endpoint with its deliveries, and the two confirmation pages. Every value is rendered by
 * the escaping `html` template; no secret reaches a page except the one just made, once. "Add an
 * endpoint", "Rotate secret", "Remove" and "Resend" are drawn only for a role that may manage webhooks
 * (role-views.ts).
 */

import type { DeliveryAttemptView, DeliveryView, WebhookEndpointView } from '../services/webhooks/webhook-endpoints.js';
import { MAX_ENDPOINTS_PER_SERVER } from '../services/webhooks/webhook-endpoints.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../services/webhooks/webhook-events.js';
import { WEBHOOK_TIMEOUT_MS } from '../services/webhooks/webhook-retry-policy.js';
import { html, type SafeHtml } from '../web/html.js';
import { timeOf } from './display-format.js';
import { checkboxGroup, type FieldErrors, formError, selectField, shownOnce, textField } from './forms.js';
import { csrfField, onceField, type PageContext } from './layout-views.js';
import { may, roleNote } from './role-views.js';

/** The tokens of a form that creates something: the session's CSRF token and a one-time nonce. */
type FormTokens = Pick<PageContext, 'csrf' | 'once'>;

import type { AccountServer } from './server-access.js';
import { serverTabPage } from './server-views.js';

/** What each event type reports, beside its checkbox. */
const EVENT_DESCRIPTIONS: Record<WebhookEventType, string> = {
  'credential.connected': 'an end user connected a credential (OAuth or hosted form)',
  'credential.revoked': 'a credential was revoked or replaced',
  'credential.needs_reauth': 'the provider refused a refresh: the end user must connect again',
  'credential.refresh_failed': 'a refresh failed for an outage (first failure in a row)',
  'credential.recovered': 'a refresh succeeded after failing',
  'connect.failed': 'an OAuth connection ended as failed',
};

/** The grace periods "Rotate secret" offers (the service takes any 0 to 7 days). */
export const SECRET_GRACE_OPTIONS = [
  { value: '0', label: 'No grace: the old secret stops signing at once' },
  { value: '3600', label: '1 hour' },
  { value: '86400', label: '24 hours' },
  { value: '604800', label: '7 days' },
];

const SECRET_KEPT = 'Keyward keeps it encrypted, to sign with.';

export function webhooksUrl(server: AccountServer): string {
  return `/dashboard/servers/${server.id}/webhooks`;
}

export function endpointUrl(server: AccountServer, webhookId: string): string {
  return `${webhooksUrl(server)}/${webhookId}`;
}

/** A page of the Webhooks tab; one endpoint's pages sit under the tab in the breadcrumbs. */
export function webhookPage(
  context: PageContext,
  server: AccountServer,
  title: string,
  body: SafeHtml,
  options: { notice?: string | null; endpoint?: boolean } = {},
): string {
  const under = options.endpoint ? { label: 'Webhooks', href: webhooksUrl(server) } : undefined;
  return serverTabPage(context, server, { tab: 'webhooks', title, body, notice: options.notice, under });
}

function eventsText(events: readonly string[]): SafeHtml | string {
  return events.length === WEBHOOK_EVENT_TYPES.length ? 'All events' : html`${events.map((e, i) => html`${i ? ', ' : ''}<code>${e}</code>`)}`;
}

export interface AddForm {
  url: string;
  events: readonly string[];
  errors: FieldErrors;
  problem?: string;
}

export const EMPTY_ADD_FORM: AddForm = { url: '', events: WEBHOOK_EVENT_TYPES, errors: {} };

function addForm(server: AccountServer, tokens: FormTokens, form: AddForm): SafeHtml {
  return html`<section class="panel" aria-labelledby="webhook-add-title">
<h2 id="webhook-add-title">Add an endpoint</h2>
${formError(form.problem)}
<form method="post" action="${webhooksUrl(server)}" novalidate>${csrfField(tokens.csrf)}${onceField(tokens.once)}
${textField({
  name: 'url',
  label: 'Endpoint URL',
  type: 'url',
  value: form.url,
  required: true,
  maxLength: 2048,
  hint: 'Where Keyward POSTs each event: an https URL of your backend.',
  errors: form.errors,
})}
${checkboxGroup({
  name: 'events',
  label: 'Events',
  hint: 'Leave all checked to receive every event, including types added later.',
  options: WEBHOOK_EVENT_TYPES.map((type) => ({ value: type, label: type, description: EVENT_DESCRIPTIONS[type] })),
  checked: form.events,
  required: true,
  errors: form.errors,
})}
<div class="form-actions"><button type="submit">Add endpoint</button></div>
</form></section>`;
}

/** The tab: the server's endpoints, then the form that adds one (for a role that may add it). */
export function webhooksBody(server: AccountServer, context: PageContext, endpoints: WebhookEndpointView[], form: AddForm): SafeHtml {
  const mayManage = may(context, 'webhooks.manage');
  const table = endpoints.length
    ? html`<table>
<thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">Created</th></tr></thead>
<tbody>${endpoints.map(
        (e) =>
          html`<tr><td><a href="${endpointUrl(server, e.id)}"><code>${e.url}</code></a></td><td>${eventsText(e.events)}</td><td>${timeOf(e.createdAt)}</td></tr>`,
      )}</tbody>
</table>`
    : mayManage
      ? html`<p class="empty">No endpoints yet. Add one to be told when end users connect, lose or recover a credential.</p>`
      : html`<p class="empty">No endpoints yet.</p>`;
  return html`<section class="panel" aria-labelledby="webhook-list-title">
<div class="panel-head"><h2 id="webhook-list-title">Endpoints</h2><span class="muted">${endpoints.length} of ${MAX_ENDPOINTS_PER_SERVER}</span></div>
<p class="muted">Each event is signed as Standard Webhooks says (<code>webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature</code>): verify it with the endpoint's signing secret, for instance with the <code>standardwebhooks</code> package. Open an endpoint to see its deliveries.</p>
${table}
${mayManage ? '' : roleNote(context, 'can see the endpoints and their deliveries but not change them.')}
</section>
${mayManage ? addForm(server, context, form) : ''}`;
}

function statusCell(d: DeliveryView): SafeHtml {
  if (d.status === 'delivered') return html`<span class="badge ok">Delivered</span>`;
  if (d.status === 'failed') return html`<span class="badge bad">Failed</span>`;
  return html`<span class="badge warn">Pending</span>${d.nextAttemptAt ? html`<br><span class="muted">next attempt ${timeOf(d.nextAttemptAt)}</span>` : ''}`;
}

function attemptItem(a: DeliveryAttemptView): SafeHtml {
  const outcome = a.statusCode !== null ? html`HTTP ${a.statusCode}` : html`<span class="mono">${a.error ?? 'no answer'}</span>`;
  return html`<li>${timeOf(a.attemptedAt)} · ${outcome} · ${a.durationMs} ms</li>`;
}

/** `csrf`: the token of the "Resend" forms, or null where the user's role may not resend (no Actions column then). */
function deliveriesTable(server: AccountServer, endpoint: WebhookEndpointView, csrf: string | null, deliveries: DeliveryView[]): SafeHtml {
  if (deliveries.length === 0) {
    return html`<p class="empty">No deliveries yet. Events are sent here as they happen on this server.</p>`;
  }
  const rows = deliveries.map(
    (d, i) => html`<tr>
<td><code id="delivery-${i}">${d.type}</code><br><span class="muted mono">${d.messageId}</span></td>
<td>${timeOf(d.createdAt)}</td>
<td>${statusCell(d)}</td>
<td>${d.attempts.length ? html`<ol class="attempts">${d.attempts.map(attemptItem)}</ol>` : html`<span class="muted">None yet</span>`}</td>
${
  csrf === null
    ? ''
    : html`<td class="actions">${
        d.status === 'failed'
          ? html`<form method="post" action="${endpointUrl(server, endpoint.id)}/messages/${d.messageId}/resend">${csrfField(csrf)}<button type="submit" class="secondary" aria-describedby="delivery-${i}">Resend</button></form>`
          : ''
      }</td>`
}
</tr>`,
  );
  return html`<table>
<thead><tr><th scope="col">Event</th><th scope="col">Time</th><th scope="col">Status</th><th scope="col">Attempts</th>${
    csrf === null ? '' : html`<th scope="col"><span class="visually-hidden">Actions</span></th>`
  }</tr></thead>
<tbody>${rows}</tbody>
</table>`;
}

/**
 * One endpoint: what it is, its two actions (each behind a confirmation, for a role that may take
 * them), and its deliveries; above them the signing secret, only in the answer to the POST that made it.
 */
export function endpointBody(
  server: AccountServer,
  endpoint: WebhookEndpointView,
  context: PageContext,
  deliveries: { list: DeliveryView[]; shown: number },
  secret?: { label: string; value: string },
): SafeHtml {
  const base = endpointUrl(server, endpoint.id);
  const mayManage = may(context, 'webhooks.manage');
  return html`${secret ? shownOnce(secret.label, secret.value, SECRET_KEPT) : ''}
<section class="panel" aria-labelledby="webhook-details">
<h2 id="webhook-details">Endpoint</h2>
<table><tbody>
<tr><th scope="row">URL</th><td><code>${endpoint.url}</code></td></tr>
<tr><th scope="row">Endpoint ID</th><td><code>${endpoint.id}</code></td></tr>
<tr><th scope="row">Events</th><td>${eventsText(endpoint.events)}</td></tr>
<tr><th scope="row">Created</th><td>${timeOf(endpoint.createdAt)}</td></tr>
</tbody></table>
${
  mayManage
    ? html`<div class="form-actions">
<form method="get" action="${base}/rotate-secret"><button type="submit" class="secondary">Rotate secret</button></form>
<form method="get" action="${base}/remove"><button type="submit" class="danger">Remove</button></form>
</div>`
    : roleNote(context, 'can see this endpoint and its deliveries but not change them or resend a message.')
}
</section>
<section class="panel" aria-labelledby="webhook-deliveries">
<div class="panel-head"><h2 id="webhook-deliveries">Deliveries</h2><span class="muted">newest first, at most ${deliveries.shown}</span></div>
<p class="muted">A 2xx answer within ${WEBHOOK_TIMEOUT_MS / 1000} seconds delivers a message. Timeouts, network errors, 408, 429 and 5xx are retried for 24 hours; any other answer fails it at once. A failed message can be resent.</p>
${deliveriesTable(server, endpoint, mayManage ? context.csrf : null, deliveries.list)}
</section>`;
}

/** "Rotate secret", confirmed: the grace period, then the POST that shows the new secret once. */
export function rotateBody(server: AccountServer, endpoint: WebhookEndpointView, tokens: FormTokens, grace: string, errors: FieldErrors = {}): SafeHtml {
  const base = endpointUrl(server, endpoint.id);
  return html`<section class="panel">
<p>Make a new signing secret for <code>${endpoint.url}</code>? The new secret is shown once. During the grace period every message carries a signature by the old secret and one by the new, so your receiver keeps verifying while you deploy the new one.</p>
<form method="post" action="${base}/rotate-secret" novalidate>${csrfField(tokens.csrf)}${onceField(tokens.once)}
${selectField({
  name: 'grace',
  label: 'Grace period',
  hint: 'How long the current secret keeps signing after the new one is made.',
  value: grace,
  options: SECRET_GRACE_OPTIONS,
  required: true,
  errors,
})}
<div class="form-actions"><button type="submit">Rotate secret</button><a href="${base}">Cancel</a></div>
</form>
</section>`;
}

/** "Remove", confirmed. */
export function removeBody(server: AccountServer, endpoint: WebhookEndpointView, csrf: string): SafeHtml {
  const base = endpointUrl(server, endpoint.id);
  return html`<section class="panel">
<p>Remove the endpoint <code>${endpoint.url}</code>? Nothing more is sent to it, its pending messages are dropped, and its deliveries are deleted.</p>
<form method="post" action="${base}/remove" data-once>${csrfField(csrf)}
<div class="form-actions"><button type="submit" class="danger">Remove</button><a href="${base}">Cancel</a></div>
</form>
</section>`;
}
