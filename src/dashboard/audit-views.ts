/**
 * What the "Audit" page shows (audit-pages.ts has the route): one row per event, newest first, each
 * action told as a sentence from its detail. Event details hold labels, hints, slugs and ids, never a
 * secret; they are rendered as text by the escaping `html` template.
 */

import type { AuditAction } from '../services/audit/audit.js';
import { html, type SafeHtml } from '../web/html.js';
import { duration, hintAside, timeOf } from './display-format.js';
import { type FieldErrors, selectField, textField } from './forms.js';
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

/** Why a sign-in failed (services/users/sessions.ts `SignInFailure`), as the end of its sentence. */
function signInFailure(failure: string): string {
  switch (failure) {
    case 'locked_out':
      return 'locked out after too many failed sign-ins, password not checked';
    case 'wrong_code':
      return 'wrong one-time code';
    case 'reused_code':
      return 'a one-time code that was used already';
    case 'code_locked_out':
      return 'locked out after too many failed sign-ins, code not checked';
    default:
      return 'wrong password';
  }
}

/** What a `server.branding_changed` event changed (services/branding/branding-changes.ts writes its detail). */
function brandingChanges(d: Record<string, unknown>): string {
  const to = (field: string) => (d[field] as { to?: unknown } | undefined)?.to;
  const parts: string[] = [];
  if ('displayName' in d) parts.push(typeof to('displayName') === 'string' ? `display name set to “${to('displayName')}”` : 'display name removed');
  if ('accentColor' in d) parts.push(typeof to('accentColor') === 'string' ? `accent colour set to ${to('accentColor')}` : 'accent colour removed');
  const logo = d.logo as { change?: string; type?: string; bytes?: number } | undefined;
  if (logo?.change === 'uploaded') parts.push(`new logo (${logo.type === 'image/png' ? 'PNG' : 'SVG'}, ${Number(logo.bytes).toLocaleString('en')} bytes)`);
  if (logo?.change === 'removed') parts.push('logo removed');
  return parts.join(', ') || 'no change';
}

/** What an `end_user.profile_updated` event changed (services/audience/end-user-profile.ts writes its detail): field names and tag keys, never values. */
function profileChanges(d: Record<string, unknown>): string {
  const fields = Array.isArray(d.fields) ? (d.fields as unknown[]) : [];
  const tagKeys = Array.isArray(d.tagKeys) ? (d.tagKeys as unknown[]).join(', ') : '';
  const parts = fields.map((field) => (field === 'displayName' ? 'display name' : field === 'tags' ? `tags (${tagKeys})` : String(field)));
  return `changed ${parts.join(', ') || 'nothing'}`;
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
    case 'server.branding_changed':
      return html`Changed the branding of ${server}: ${brandingChanges(d)}`;
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
    case 'end_user.profile_updated':
      return html`${d.created === true ? 'Added' : 'Updated'} end user ${text('externalUserId')}: ${profileChanges(d)}`;
    case 'connect_session.created':
      return html`Created a connect session for end user ${text('externalUserId')}, valid until ${text('expiresAt')}`;
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
    case 'user.invited':
      return html`Invited ${text('email')} to the team as ${text('role')}`;
    case 'invitation.revoked':
      return html`Revoked the invitation of ${text('email')} (${text('role')})`;
    case 'user.joined':
      return html`${text('email')} joined the team as ${text('role')}${d.via === 'sso' ? ' through single sign-on' : ''}`;
    case 'user.role_changed':
      return html`Changed the role of ${text('email')} to ${text('to')} (was ${text('from')})`;
    case 'user.removed':
      return html`Removed ${text('email')} (${text('role')}) from the team`;
    case 'user.signed_in':
      return html`Signed in on ${text('device') || 'an unknown device'} from ${text('address')}`;
    case 'user.sign_in_failed':
      if (d.failure === 'sso_refused') return html`Single sign-on refused a sign-in from ${text('address')}: ${text('reason')}`;
      return html`Failed to sign in as ${text('email')} from ${text('address')}: ${signInFailure(text('failure'))}`;
    case 'session.ended':
      return html`Signed out a session on ${text('device') || 'an unknown device'} from ${text('address')}`;
    case 'sessions.ended_everywhere': {
      const count = typeof d.sessions === 'number' ? d.sessions : 0;
      return html`Signed out everywhere (${count === 1 ? '1 session' : `${count} sessions`} ended)`;
    }
    case 'sso.configured': {
      const domains = Array.isArray(d.allowedDomains) ? (d.allowedDomains as unknown[]).join(', ') : '';
      return html`${d.first === true ? 'Connected single sign-on to' : 'Changed the single sign-on settings of'} ${text('issuer')} (domains: ${domains}; new people join as ${text(
        'defaultRole',
      )}${d.secretChanged === true && d.first !== true ? '; new client secret' : ''})`;
    }
    case 'sso.removed':
      return html`Removed single sign-on through ${text('issuer')}${d.requireSsoTurnedOff === true ? '; passwords work again for everyone' : ''}`;
    case 'account.sso_required_changed':
      return d.to === true
        ? html`Required single sign-on: passwords turned off for everyone but owners`
        : html`Stopped requiring single sign-on: passwords work again for everyone`;
    case 'mfa.enabled':
      return html`Turned on one-time codes for ${text('email')}`;
    case 'mfa.disabled':
      return html`Turned off one-time codes for ${text('email')}; their recovery codes stopped working`;
    case 'mfa.recovery_code_used': {
      const left = typeof d.remaining === 'number' ? d.remaining : 0;
      return html`Used a recovery code of ${text('email')} (${left === 1 ? '1 code' : `${left} codes`} left)`;
    }
    case 'mfa.recovery_codes_regenerated':
      return html`Made new recovery codes for ${text('email')}; the old ones stopped working`;
    case 'account.mfa_required_changed':
      return d.required === true ? html`Required one-time codes for everyone who signs in with a password` : html`Stopped requiring one-time codes`;
    default:
      return html`${event.action}`;
  }
}

/**
 * Every action the trail records, as the Audit page's "Action" filter names it. Typed by AuditAction,
 * so a new action without its label fails to compile rather than being missing from the filter.
 */
export const AUDIT_ACTION_LABELS: Partial<Record<AuditAction, string>> = {
  'account_key.created': 'Account API key generated',
  'account_key.revoked': 'Account API key revoked',
  'account_key.browser_exposure': 'Account API key sent from a browser',
  'server.created': 'Server created',
  'server.mode_changed': 'Server mode changed',
  'server.secrets_readable_changed': 'Server made write-only or readable',
  'server_key.rotated': 'Server key rotated',
  'server.redirect_uri_allowed': 'Redirect URI allowed',
  'server.redirect_uri_removed': 'Redirect URI removed',
  'server.branding_changed': 'Server branding changed',
  'provider.enabled': 'Provider enabled',
  'provider.added': 'Custom provider added',
  'credential.connected': 'Credential connected',
  'credential.replaced': 'Credential replaced',
  'credential.revoked': 'Credential revoked',
  'credential.checked': 'Credential checked',
  'end_user.removed': 'End user removed',
  'end_user.profile_updated': 'End user profile updated',
  'connect_session.created': 'Connect session created',
  'webhook.added': 'Webhook endpoint added',
  'webhook.removed': 'Webhook endpoint removed',
  'webhook.secret_rotated': 'Webhook secret rotated',
  'webhook.message_resent': 'Webhook message resent',
  'user.password_set': 'Password set',
  'user.invited': 'User invited',
  'invitation.revoked': 'Invitation revoked',
  'user.joined': 'User joined',
  'user.role_changed': 'Role changed',
  'user.removed': 'User removed',
  'user.signed_in': 'Signed in',
  'user.sign_in_failed': 'Sign-in failed',
  'session.ended': 'Session signed out',
  'sessions.ended_everywhere': 'Signed out everywhere',
  'sso.configured': 'Single sign-on configured',
  'sso.removed': 'Single sign-on removed',
  'account.sso_required_changed': 'Require SSO changed',
  'mfa.enabled': 'One-time codes turned on',
  'mfa.disabled': 'One-time codes turned off',
  'mfa.recovery_code_used': 'Recovery code used',
  'mfa.recovery_codes_regenerated': 'New recovery codes made',
  'account.mfa_required_changed': 'Require MFA changed',
};

/** The filter's values as sent (empty: all), and a message beside a field that cannot be used. */
export interface AuditFilterForm {
  user: string;
  action: string;
  from: string;
  to: string;
  errors: FieldErrors;
}

function filterForm(form: AuditFilterForm, users: { id: string; email: string }[]): SafeHtml {
  const { errors } = form;
  const filtered = form.user || form.action || form.from || form.to;
  return html`<form method="get" action="/dashboard/audit" class="filters" aria-label="Filter events">
${selectField({
  name: 'user',
  label: 'User',
  value: form.user,
  options: [{ value: '', label: 'All users' }, ...users.map((u) => ({ value: `user:${u.id}`, label: u.email })), { value: 'cli', label: 'CLI (operator)' }],
  errors,
})}
${selectField({
  name: 'action',
  label: 'Action',
  value: form.action,
  options: [{ value: '', label: 'All actions' }, ...Object.entries(AUDIT_ACTION_LABELS).map(([value, label]) => ({ value, label: label ?? value }))],
  errors,
})}
${textField({ name: 'from', label: 'From', type: 'date', value: form.from, hint: 'A day in UTC.', errors })}
${textField({ name: 'to', label: 'To', type: 'date', value: form.to, hint: 'Included.', errors })}
<div class="form-actions"><button type="submit" class="secondary">Filter</button>${filtered ? html` <a href="/dashboard/audit">Clear</a>` : ''}</div>
</form>`;
}

/** One page of events; `newest` says whether this is the first page, `older` links to the next, `newestHref` back to the first (filters kept). */
export function auditPage(
  context: PageContext,
  view: {
    form: AuditFilterForm;
    users: { id: string; email: string }[];
    events: EventRow[];
    names: Map<string, string>;
    providerName: (slug: string) => string;
    newest: boolean;
    older: string | null;
    newestHref?: string;
  },
): string {
  const { events, names, older, form } = view;
  const later = !view.newest;
  const newestHref = view.newestHref ?? '/dashboard/audit';
  const filtered = form.user || form.action || form.from || form.to;
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
    ? html`<p class="empty">No older events. <a href="${newestHref}">Back to the newest events</a>.</p>`
    : filtered
      ? html`<p class="empty">No event matches these filters. <a href="/dashboard/audit">Show every event</a>.</p>`
      : html`<p class="empty">Nothing has happened in this account yet. Generate an account API key under <a href="/dashboard/developer/api-keys">Developer → Account API Keys</a> or create a server under <a href="/dashboard/servers">Servers</a>, and it will be listed here.</p>`;
  const pager =
    later || older
      ? html`<nav class="pager" aria-label="Audit pages">${later ? html`<a href="${newestHref}">Newest events</a>` : ''}${
          older ? html`<a href="${older}">Older events</a>` : ''
        }</nav>`
      : '';
  const body = html`<p class="muted">Who generated or revoked account API keys, created servers, changed their mode, rotated their keys, changed their allowed redirect URIs, enabled providers, connected or revoked end users' credentials, removed end users, changed webhook endpoints, and who joined, left or signed in to the team.</p>
${filterForm(form, view.users)}
<section class="panel" aria-label="Audit events">
${events.length ? table : empty}
</section>
${pager}`;
  return dashboardPage(context, { title: 'Audit', section: 'audit', body });
}
