/**
 * A server's Audience tab: the end users of a business-mode server and their credentials (provider,
 * type, status, dates — never a secret), 20 a page, with a "Revoke" per credential that goes through a
 * confirmation page whose form POSTs. A personal-mode server has no audience and says so.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { html, type SafeHtml } from '../web/html.js';
import { Problem } from '../errors.js';
import { findMemberCredential, listMembers, revokeMember, type CredentialSummary, type MemberPage } from '../services/audience.js';
import type { ServiceContext } from '../services/context.js';
import { listServerProviders } from '../services/providers.js';
import { formText } from '../web/form-fields.js';
import { selectField, textField } from './forms.js';
import { csrfField, dashboardPage, fixedText, sendPage, type PageContext } from './layout.js';
import { pageContext } from './plugin.js';
import { kindLabel, shownDate } from './provider-forms.js';
import { memberActor, serverBreadcrumbs, serverOfAccount, serverTabs, type AccountServer } from './server-access.js';

const PAGE_SIZE = 20;

/** What the provider said when asked to revoke the tokens, in fixed words per outcome (never query text). */
const REVOKED: Record<string, string> = {
  succeeded: 'Credential revoked. Keyward erased it and the provider confirmed that its tokens are revoked.',
  failed: "Credential revoked. Keyward erased it, but the provider did not confirm revoking its tokens: remove the app's access at the provider if you need to be sure.",
  not_supported: 'Credential revoked. Keyward erased it; this provider offers no way to revoke tokens, so nothing more was sent to it.',
};

type AudienceRoute = { Params: { serverId: string }; Querystring: Record<string, unknown> };

/** A query value as given: external user ids are matched exactly, so nothing is trimmed. */
function queryText(query: Record<string, unknown>, name: string): string {
  const value = query[name];
  return typeof value === 'string' ? value : '';
}

function audienceUrl(server: AccountServer, query: Record<string, string> = {}): string {
  const search = new URLSearchParams(Object.entries(query).filter(([, v]) => v)).toString();
  return `/dashboard/servers/${server.id}/audience${search ? `?${search}` : ''}`;
}

function breadcrumbs(server: AccountServer, audience = false) {
  const crumbs = [...serverBreadcrumbs(), { label: server.name, href: `/dashboard/servers/${server.id}` }];
  return audience ? [...crumbs, { label: 'Audience', href: audienceUrl(server) }] : crumbs;
}

function statusBadge(status: CredentialSummary['status']): SafeHtml {
  return status === 'active' ? html`<span class="badge ok">Active</span>` : html`<span class="badge warn">Needs re-authorisation</span>`;
}

function membersTable(server: AccountServer, page: MemberPage, nameOf: (slug: string) => string): SafeHtml {
  const groups = page.data.map((member) => {
    const span = Math.max(member.credentials.length, 1);
    const head = html`<th scope="rowgroup" rowspan="${span}"><code>${member.externalUserId}</code></th>
<td rowspan="${span}">${shownDate(member.createdAt)}</td><td rowspan="${span}">${shownDate(member.updatedAt)}</td>`;
    if (member.credentials.length === 0) return html`<tbody><tr>${head}<td colspan="6" class="muted">No credentials</td></tr></tbody>`;
    const rows = member.credentials.map(
      (c, i) => html`<tr>${i === 0 ? head : ''}
<td>${nameOf(c.provider)}</td><td>${kindLabel(c.type)}</td><td>${statusBadge(c.status)}</td>
<td>${shownDate(c.connectedAt)}</td><td>${shownDate(c.updatedAt)}</td>
<td class="actions"><form method="get" action="${audienceUrl(server)}/revoke">
<input type="hidden" name="externalUserId" value="${member.externalUserId}"><input type="hidden" name="provider" value="${c.provider}">
<button type="submit" class="secondary" aria-label="Revoke the ${nameOf(c.provider)} credential of ${member.externalUserId}">Revoke</button>
</form></td></tr>`,
    );
    return html`<tbody>${rows}</tbody>`;
  });
  return html`<table class="row-headed audience">
<thead><tr><th scope="col">External user id</th><th scope="col">Added</th><th scope="col">Updated</th><th scope="col">Provider</th><th scope="col">Type</th>
<th scope="col">Status</th><th scope="col">Connected</th><th scope="col">Credential updated</th><th scope="col">Actions</th></tr></thead>
${groups}
</table>`;
}

function page(context: PageContext, server: AccountServer, body: SafeHtml, notice: string | null = null): string {
  return dashboardPage(context, {
    title: `${server.name}: Audience`,
    section: 'servers',
    body: html`${serverTabs(server, 'audience')}
${body}`,
    notice,
    breadcrumbs: breadcrumbs(server),
  });
}

export function registerAudiencePages(scope: FastifyInstance, ctx: ServiceContext) {
  /** The server of the URL, in the member's account and in business mode (else the same 404 as an unknown one). */
  async function businessServer(request: FastifyRequest<AudienceRoute>): Promise<AccountServer> {
    const server = await serverOfAccount(ctx, pageContext(request).member.accountId, request.params.serverId);
    if (server.mode !== 'business') throw new Problem('route_not_found', 'A personal-mode server has no audience.');
    return server;
  }

  async function providerNames(serverId: string): Promise<{ options: { value: string; label: string }[]; nameOf: (slug: string) => string }> {
    const enabled = await listServerProviders(ctx, serverId);
    const names = new Map(enabled.map((p) => [p.slug, p.name]));
    return {
      options: enabled.map((p) => ({ value: p.slug, label: p.name })),
      nameOf: (slug) => names.get(slug) ?? ctx.catalog(slug)?.name ?? slug,
    };
  }

  scope.get<AudienceRoute>('/servers/:serverId/audience', async (request, reply) => {
    const context = pageContext(request);
    const server = await serverOfAccount(ctx, context.member.accountId, request.params.serverId);
    if (server.mode !== 'business') {
      return sendPage(
        reply,
        page(context, server, html`<section class="panel">
<p class="empty">This server is in personal mode, so it has no audience: only a business-mode server keeps credentials for the end users of your product.
<a href="/dashboard/servers/${server.id}">Change its mode on the Overview tab</a>.</p>
</section>`),
      );
    }
    const filter = { provider: queryText(request.query, 'provider').trim(), prefix: queryText(request.query, 'prefix') };
    const cursor = queryText(request.query, 'cursor');
    const members = await listMembers(ctx, server.id, {
      limit: PAGE_SIZE,
      cursor: cursor || undefined,
      provider: filter.provider || undefined,
      prefix: filter.prefix || undefined,
    });
    const { options, nameOf } = await providerNames(server.id);
    const filtered = Boolean(filter.provider || filter.prefix);
    const filterForm = html`<form method="get" action="${audienceUrl(server)}" class="inline-form audience-filter" aria-label="Filter end users">
${selectField({ name: 'provider', label: 'Provider', value: filter.provider, options: [{ value: '', label: 'Any provider' }, ...options] })}
${textField({ name: 'prefix', label: 'External user id starts with', value: filter.prefix, maxLength: 255, autocomplete: 'off' })}
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
    const revocation = queryText(request.query, 'revocation');
    const notice = queryText(request.query, 'notice') === 'credential-revoked' ? (fixedText(REVOKED, revocation) ?? 'Credential revoked.') : null;
    const body = html`<section class="panel" aria-labelledby="audience-title">
<div class="panel-head"><h2 id="audience-title">End users</h2></div>
${filterForm}
${members.data.length ? membersTable(server, members, nameOf) : empty}
${pager}
</section>`;
    return sendPage(reply, page(context, server, body, notice));
  });

  /** The credential the revoke URL or form names, or a 404 page when the member or credential is not there. */
  async function namedCredential(server: AccountServer, externalUserId: string, provider: string): Promise<CredentialSummary> {
    // An empty provider would make revokeMember erase every credential of the member: never pass one.
    const found = externalUserId && provider ? await findMemberCredential(ctx, server.id, externalUserId, provider) : null;
    if (!found) throw new Problem('credential_not_found', 'No such credential on this server.');
    return found;
  }

  scope.get<AudienceRoute>('/servers/:serverId/audience/revoke', async (request, reply) => {
    const context = pageContext(request);
    const server = await businessServer(request);
    const externalUserId = queryText(request.query, 'externalUserId');
    const credential = await namedCredential(server, externalUserId, queryText(request.query, 'provider'));
    const { nameOf } = await providerNames(server.id);
    const body = html`<section class="panel" aria-labelledby="revoke-title">
<h2 id="revoke-title">Revoke credential</h2>
<p>Revoke the ${nameOf(credential.provider)} credential of ${externalUserId}? Keyward erases it and asks the provider to revoke its tokens.</p>
<form method="post" action="${audienceUrl(server)}/revoke">
${csrfField(context.csrf)}
<input type="hidden" name="externalUserId" value="${externalUserId}">
<input type="hidden" name="provider" value="${credential.provider}">
<div class="form-actions"><button type="submit" class="danger">Revoke</button><a href="${audienceUrl(server)}">Cancel</a></div>
</form>
</section>`;
    return sendPage(
      reply,
      dashboardPage(context, { title: 'Revoke credential', section: 'servers', body, breadcrumbs: breadcrumbs(server, true) }),
    );
  });

  scope.post<AudienceRoute>('/servers/:serverId/audience/revoke', async (request, reply) => {
    const { member } = pageContext(request);
    const server = await businessServer(request);
    const externalUserId = formText(request.body, 'externalUserId');
    const credential = await namedCredential(server, externalUserId, formText(request.body, 'provider').trim());
    const result = await revokeMember(ctx, {
      accountId: member.accountId,
      serverId: server.id,
      externalUserId,
      provider: credential.provider,
      actor: memberActor(member.memberId),
    });
    const outcome = result.revoked[0]?.providerRevocation ?? '';
    return reply.redirect(audienceUrl(server, { notice: 'credential-revoked', revocation: outcome }), 303);
  });
}
