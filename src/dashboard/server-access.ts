/**
 * A server page belongs to one account: every server route looks the server up through the signed-in
 * member's account, so another account's server id answers the same 404 as an id that does not exist.
 */
import { html, type SafeHtml } from '../web/html.js';
import { Problem } from '../errors.js';
import type { ServiceContext } from '../services/context.js';

export interface AccountServer {
  id: string;
  name: string;
  mode: 'business' | 'personal';
  created_at: string;
}

export async function serverOfAccount(ctx: ServiceContext, accountId: string, serverId: string): Promise<AccountServer> {
  const server = await ctx.store.servers.ofAccount(accountId, serverId);
  if (!server) throw new Problem('route_not_found', 'No such server in this account.');
  return server;
}

export type ServerTab = 'overview' | 'providers' | 'audience' | 'webhooks';

/** The tabs of one server's pages. */
export function serverTabs(server: AccountServer, active: ServerTab): SafeHtml {
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

export function serverBreadcrumbs(): { label: string; href: string }[] {
  return [{ label: 'Servers', href: '/dashboard/servers' }];
}

/** How the dashboard names who did something in the audit trail and in "created by". */
export function memberActor(memberId: string): string {
  return `member:${memberId}`;
}
