/**
 * The "Audit" page: who did what in the account, newest first, 50 events a page. Every row is read
 * through the member's account id, so another account's events, keys, members and servers never
 * appear. Event details hold labels, hints, slugs and ids, never a secret; they are rendered as text.
 */
import { html, type SafeHtml } from '../web/html.js';
import type { ServiceContext } from '../services/context.js';
import { dashboardPage, errorPage, sendPage } from './layout.js';
import { pageContext, type PageRoutes } from './plugin.js';

const PAGE_SIZE = 50;

/** A time as the dashboard shows it: UTC to the minute, with the exact instant for machines. */
export function timeOf(at: string): SafeHtml {
  return html`<time datetime="${at}">${at.slice(0, 10)} ${at.slice(11, 16)} UTC</time>`;
}

/**
 * How each actor of a list is named on a page: a member by email, the CLI, an account key by label and
 * hint, an end user, a browser. Members and keys are looked up within the account only, so an actor
 * string can never reveal another account's member or key.
 */
export async function actorNames(ctx: ServiceContext, accountId: string, actors: Iterable<string>): Promise<Map<string, string>> {
  const unique = [...new Set(actors)];
  const memberIds = unique.filter((a) => a.startsWith('member:')).map((a) => a.slice('member:'.length));
  const keyIds = unique.filter((a) => a.startsWith('api:')).map((a) => a.slice('api:'.length));
  const members = await ctx.store.accounts.memberEmails(accountId, memberIds);
  const keys = await ctx.store.keys.accountKeyNames(accountId, keyIds);
  const emails = new Map(members.map((m) => [m.id, m.email]));
  const keyNames = new Map(keys.map((k) => [k.id, `API key ${k.label} (${k.hint})`]));
  const names = new Map<string, string>();
  for (const actor of unique) {
    if (actor === 'cli') names.set(actor, 'CLI');
    else if (actor === 'browser') names.set(actor, 'A browser');
    else if (actor.startsWith('end_user:')) names.set(actor, 'End user');
    else if (actor.startsWith('member:')) names.set(actor, emails.get(actor.slice('member:'.length)) ?? 'A former member');
    else if (actor.startsWith('api:')) names.set(actor, keyNames.get(actor.slice('api:'.length)) ?? 'An account API key');
    else names.set(actor, 'Keyward');
  }
  return names;
}

/** A grace period in words: the largest whole unit, as chosen on "Rotate key". */
function duration(seconds: number): string {
  const units: [number, string][] = [[86_400, 'day'], [3600, 'hour'], [60, 'minute'], [1, 'second']];
  for (const [size, unit] of units) {
    if (seconds >= size && seconds % size === 0) return `${seconds / size} ${unit}${seconds / size === 1 ? '' : 's'}`;
  }
  return `${seconds} seconds`;
}

interface EventRow {
  id: string;
  action: string;
  actor: string;
  detail: string;
  created_at: string;
  server_id: string | null;
  server_name: string | null;
}

/** The "What" column: one sentence per action, from the event's detail (text only, escaped by `html`). */
function describe(ctx: ServiceContext, event: EventRow): SafeHtml {
  let d: Record<string, unknown> = {};
  try {
    d = JSON.parse(event.detail) as Record<string, unknown>;
  } catch {
    // A detail that is not JSON is shown as the bare action below.
  }
  const text = (name: string) => (typeof d[name] === 'string' ? (d[name] as string) : '');
  const provider = (slug: string) => ctx.catalog(slug)?.name ?? slug;
  const server = event.server_name ?? 'a deleted server';
  const hint = (value: string) => (value ? html` <span class="muted mono">(${value})</span>` : '');
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
    case 'server_key.rotated': {
      const grace = typeof d.graceSeconds === 'number' ? d.graceSeconds : 0;
      return html`Rotated the server key of ${server}${hint(text('keyHint'))}; ${
        grace > 0 ? `the old key stayed valid for ${duration(grace)}` : 'the old key stopped at once'
      }`;
    }
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
    default:
      return html`${event.action}`;
  }
}

/** A page position: the last shown event's time and id, so no event is skipped or repeated. */
const CURSOR = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)~(evt_[0-9a-f]{28})$/;

export const registerAuditPages: PageRoutes = (scope, ctx) => {
  scope.get('/audit', async (request, reply) => {
    const context = pageContext(request);
    const { accountId } = context.member;
    const before = (request.query as Record<string, unknown>).before;
    const cursor = typeof before === 'string' ? CURSOR.exec(before) : null;
    if (before !== undefined && !cursor) return sendPage(reply, errorPage(400), 400);

    // One more than a page: whether it came tells whether there are older events.
    const rows: EventRow[] = await ctx.store.audit.pageOfAccount(accountId, cursor ? { at: cursor[1]!, id: cursor[2]! } : null, PAGE_SIZE + 1);
    const events = rows.slice(0, PAGE_SIZE);
    const last = events.at(-1);
    const older = rows.length > PAGE_SIZE && last ? `/dashboard/audit?before=${encodeURIComponent(`${last.created_at}~${last.id}`)}` : null;
    const names = await actorNames(ctx, accountId, events.map((e) => e.actor));

    const table = html`<table class="audit">
<caption class="muted">Newest first. Times are in UTC.</caption>
<thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Server</th></tr></thead>
<tbody>
${events.map(
  (e) => html`<tr>
<td>${timeOf(e.created_at)}</td>
<td>${names.get(e.actor)}</td>
<td>${describe(ctx, e)}</td>
<td>${e.server_id && e.server_name ? html`<a href="/dashboard/servers/${e.server_id}">${e.server_name}</a>` : html`<span class="muted">—</span>`}</td>
</tr>`,
)}
</tbody>
</table>`;
    const empty = cursor
      ? html`<p class="empty">No older events. <a href="/dashboard/audit">Back to the newest events</a>.</p>`
      : html`<p class="empty">Nothing has happened in this account yet. Generate an account API key under <a href="/dashboard/developer/api-keys">Developer → Account API Keys</a> or create a server under <a href="/dashboard/servers">Servers</a>, and it will be listed here.</p>`;
    const pager =
      cursor || older
        ? html`<nav class="pager" aria-label="Audit pages">${cursor ? html`<a href="/dashboard/audit">Newest events</a>` : ''}${
            older ? html`<a href="${older}">Older events</a>` : ''
          }</nav>`
        : '';
    const body = html`<p class="muted">Who generated or revoked account API keys, created servers, changed their mode, rotated their keys, enabled providers, connected or revoked end users' credentials, and changed webhook endpoints.</p>
<section class="panel" aria-label="Audit events">
${events.length ? table : empty}
</section>
${pager}`;
    return sendPage(reply, dashboardPage(context, { title: 'Audit', section: 'audit', body }));
  });
};
