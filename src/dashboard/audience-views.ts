/**
 * What a server's Audience tab shows (audience-pages.ts has the routes): the end users of a
 * business-mode server (each with its display name, email and tags beneath its id) and their credentials (provider, type, status, dates — never a secret), the
 * filter, the pages, and the confirmations before a credential is revoked or a member without
 * credentials is removed. "Revoke" and "Remove" are drawn only for a role that may revoke credentials
 * (role-views.ts); a viewer sees the same table without its Actions column.
 */
import type { AudienceMemberPage, CredentialSummary } from '../services/audience/members.js';
import { html, type SafeHtml } from '../web/html.js';
import { kindLabel, shownDate, timeOf } from './display-format.js';
import { type FieldErrors, selectField, textField } from './forms.js';
import { csrfField, dashboardPage, type PageContext } from './layout-views.js';
import { may, roleNote } from './role-views.js';
import type { AccountServer } from './server-access.js';
import { serverCrumbs, serverTabPage } from './server-views.js';

/** The provider names of a server: the options of the filter, and a name for any slug. */
export interface ProviderNames {
  options: { value: string; label: string }[];
  nameOf: (slug: string) => string;
}

type AudienceFilter = { provider: string; prefix: string; tag: string };

export function audienceUrl(server: AccountServer, query: Record<string, string> = {}): string {
  const search = new URLSearchParams(Object.entries(query).filter(([, v]) => v)).toString();
  return `/dashboard/servers/${server.id}/audience${search ? `?${search}` : ''}`;
}

function statusBadge(status: CredentialSummary['status']): SafeHtml {
  return status === 'active' ? html`<span class="badge ok">Active</span>` : html`<span class="badge warn">Needs re-authorisation</span>`;
}

const CHECK_OUTCOMES: Record<NonNullable<CredentialSummary['lastCheck']>['outcome'], string> = {
  valid: 'Valid',
  rejected: 'Refused by the provider',
  unreachable: 'Provider unreachable',
};

/** The last check of a static credential's values (CONTRACT 8.3): its outcome and when; a dash where never checked. */
function lastCheck(check: CredentialSummary['lastCheck']): SafeHtml | string {
  return check ? html`${CHECK_OUTCOMES[check.outcome]}, ${timeOf(check.at)}` : '—';
}

/**
 * The member's own header: its id, then what its profile holds (CONTRACT 10): the display name, the
 * email, and each tag as a `key: value` badge; nothing where unset.
 */
function memberHeading(member: AudienceMemberPage['data'][number]): SafeHtml {
  const tags = Object.entries(member.tags);
  return html`<code>${member.externalUserId}</code>${member.displayName === null ? '' : html`<br><span>${member.displayName}</span>`}${
    member.email === null ? '' : html`<br><span class="muted">${member.email}</span>`
  }${tags.length ? html`<br><span class="member-tags" aria-label="Tags">${tags.map(([key, value]) => html`<span class="badge">${key}: ${value}</span> `)}</span>` : ''}`;
}

/** `actions`: whether the rows carry "Revoke" and "Remove" (the user's role may revoke credentials). */
function membersTable(server: AccountServer, page: AudienceMemberPage, nameOf: (slug: string) => string, actions: boolean): SafeHtml {
  const groups = page.data.map((member) => {
    const span = Math.max(member.credentials.length, 1);
    const head = html`<th scope="rowgroup" rowspan="${span}">${memberHeading(member)}</th>
<td rowspan="${span}">${shownDate(member.createdAt)}</td><td rowspan="${span}">${shownDate(member.updatedAt)}</td>`;
    if (member.credentials.length === 0) {
      return html`<tbody><tr>${head}<td colspan="7" class="muted">No credentials</td>
${
  actions
    ? html`<td class="actions"><form method="get" action="${audienceUrl(server)}/remove">
<input type="hidden" name="externalUserId" value="${member.externalUserId}">
<button type="submit" class="secondary" aria-label="Remove end user ${member.externalUserId}">Remove</button>
</form></td>`
    : ''
}</tr></tbody>`;
    }
    const rows = member.credentials.map(
      (c, i) => html`<tr>${i === 0 ? head : ''}
<td>${nameOf(c.provider)}</td><td>${kindLabel(c.type)}</td><td>${statusBadge(c.status)}</td>
<td>${shownDate(c.connectedAt)}</td><td>${shownDate(c.updatedAt)}</td><td>${shownDate(c.lastUsedAt)}</td><td>${lastCheck(c.lastCheck)}</td>
${
  actions
    ? html`<td class="actions"><form method="get" action="${audienceUrl(server)}/revoke">
<input type="hidden" name="externalUserId" value="${member.externalUserId}"><input type="hidden" name="provider" value="${c.provider}">
<button type="submit" class="secondary" aria-label="Revoke the ${nameOf(c.provider)} credential of ${member.externalUserId}">Revoke</button>
</form></td>`
    : ''
}</tr>`,
    );
    return html`<tbody>${rows}</tbody>`;
  });
  return html`<table class="row-headed audience">
<thead><tr><th scope="col">External user id</th><th scope="col">Added</th><th scope="col">Updated</th><th scope="col">Provider</th><th scope="col">Type</th>
<th scope="col">Status</th><th scope="col">Connected</th><th scope="col">Credential updated</th><th scope="col">Last used</th><th scope="col">Last check</th>
${actions ? html`<th scope="col">Actions</th>` : ''}</tr></thead>
${groups}
</table>`;
}

function tabPage(context: PageContext, server: AccountServer, body: SafeHtml, notice: string | null = null): string {
  return serverTabPage(context, server, { tab: 'audience', title: `${server.name}: Audience`, body, notice });
}

/** A personal-mode server has no audience, and its tab says where the mode is changed. */
export function personalModePage(context: PageContext, server: AccountServer): string {
  return tabPage(
    context,
    server,
    html`<section class="panel">
<p class="empty">This server is in personal mode, so it has no audience: only a business-mode server keeps credentials for the end users of your product.
<a href="/dashboard/servers/${server.id}">Change its mode on the Overview tab</a>.</p>
</section>`,
  );
}

/** One page of end users, 20 at most, under the filter that chose them. */
export function audiencePage(
  context: PageContext,
  server: AccountServer,
  view: { members: AudienceMemberPage; filter: AudienceFilter; cursor: string; names: ProviderNames; notice: string | null; errors?: FieldErrors },
): string {
  const { members, filter, cursor, names, errors } = view;
  const actions = may(context, 'credentials.revoke');
  const filtered = Boolean(filter.provider || filter.prefix || filter.tag);
  const filterForm = html`<form method="get" action="${audienceUrl(server)}" class="inline-form audience-filter" aria-label="Filter end users">
${selectField({ name: 'provider', label: 'Provider', value: filter.provider, options: [{ value: '', label: 'Any provider' }, ...names.options] })}
${textField({ name: 'prefix', label: 'External user id starts with', value: filter.prefix, maxLength: 255, autocomplete: 'off' })}
${textField({ name: 'tag', label: 'Tag (key:value)', value: filter.tag, maxLength: 241, autocomplete: 'off', errors })}
<div class="form-actions"><button type="submit" class="secondary">Filter</button>${filtered ? html`<a href="${audienceUrl(server)}">Clear filter</a>` : ''}</div>
</form>`;
  const empty = filtered
    ? html`<p class="empty">No end users match this filter. <a href="${audienceUrl(server)}">Clear the filter</a> to see them all.</p>`
    : cursor
      ? html`<p class="empty">No more end users. <a href="${audienceUrl(server)}">Back to the first page</a>.</p>`
      : html`<p class="empty">No end users yet. Your backend adds them with POST /v1/oauth/{provider}/start or POST /v1/credentials/static/{provider}/connect.</p>`;
  const pager =
    members.nextCursor || cursor
      ? html`<nav class="form-actions audience-pages" aria-label="Pages">${cursor ? html`<a href="${audienceUrl(server, filter)}">First page</a>` : ''}${
          members.nextCursor ? html`<a href="${audienceUrl(server, { ...filter, cursor: members.nextCursor })}">Next page</a>` : ''
        }</nav>`
      : '';
  const body = html`<section class="panel" aria-labelledby="audience-title">
<div class="panel-head"><h2 id="audience-title">End users</h2></div>
${filterForm}
${members.data.length ? membersTable(server, members, names.nameOf, actions) : empty}
${pager}
${members.data.length && !actions ? roleNote(context, 'can see the end users and their credentials but not revoke or remove them.') : ''}
</section>`;
  return tabPage(context, server, body, view.notice);
}

/**
 * What revoking does, told for the credential at hand: an OAuth credential's tokens are also offered
 * to the provider for revocation (where it has an endpoint); a static credential's values are only
 * erased here, since a provider offers no call that revokes a key typed into a form.
 */
function revokeConsequence(credential: CredentialSummary, providerName: string): string {
  return credential.type === 'oauth2'
    ? `Keyward erases its tokens and, where ${providerName} offers a way, asks it to revoke them.`
    : `Keyward erases the stored values. Nothing is sent to ${providerName}: the values stay valid there until they are revoked at ${providerName}.`;
}

/**
 * An Audience confirmation page: the question, then a POST form to `/{action}` carrying the named
 * member (and `provider`, where one is named) with the danger button and Cancel. The page's title is
 * its one heading.
 */
function confirmationPage(
  context: PageContext,
  server: AccountServer,
  page: { title: string; question: SafeHtml; action: 'revoke' | 'remove'; button: string; externalUserId: string; provider?: string },
): string {
  const body = html`<section class="panel" aria-label="Confirm">
<p>${page.question}</p>
<form method="post" action="${audienceUrl(server)}/${page.action}">
${csrfField(context.csrf)}
<input type="hidden" name="externalUserId" value="${page.externalUserId}">
${
  page.provider === undefined
    ? ''
    : html`<input type="hidden" name="provider" value="${page.provider}">
`
}<div class="form-actions"><button type="submit" class="danger">${page.button}</button><a href="${audienceUrl(server)}">Cancel</a></div>
</form>
</section>`;
  const crumbs = serverCrumbs(server, { label: 'Audience', href: audienceUrl(server) });
  return dashboardPage(context, { title: page.title, section: 'servers', body, breadcrumbs: crumbs });
}

/** "Revoke credential", confirmed by a POST form. */
export function revokePage(context: PageContext, server: AccountServer, externalUserId: string, credential: CredentialSummary, providerName: string): string {
  return confirmationPage(context, server, {
    title: 'Revoke credential',
    question: html`Revoke the ${providerName} credential of ${externalUserId}? ${revokeConsequence(credential, providerName)}`,
    action: 'revoke',
    button: 'Revoke',
    externalUserId,
    provider: credential.provider,
  });
}

/** "Remove end user", for a member with no credentials, confirmed by a POST form. */
export function removeMemberPage(context: PageContext, server: AccountServer, externalUserId: string): string {
  return confirmationPage(context, server, {
    title: 'Remove end user',
    question: html`Remove ${externalUserId} from the audience of ${server.name}? They have no credentials. Keyward deletes the end user and cancels their pending connection links; nothing is sent to any provider.`,
    action: 'remove',
    button: 'Remove',
    externalUserId,
  });
}
