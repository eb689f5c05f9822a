/**
 * A server page belongs to one account: every server route looks the server up through the signed-in
 * user's account, so another account's server id answers the same 404 as an id that does not exist.
 */
import type { ServiceContext } from '../services/context.js';
import { notFoundPage } from './domain-errors.js';

export interface AccountServer {
  id: string;
  name: string;
  mode: 'business' | 'personal';
  created_at: string;
}

export async function serverOfAccount(ctx: ServiceContext, accountId: string, serverId: string): Promise<AccountServer> {
  const server = await ctx.store.servers.ofAccount(accountId, serverId);
  if (!server) throw notFoundPage();
  return server;
}
