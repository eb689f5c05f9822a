/**
 * The OAuth client a server has for a provider, assembled for one call to the provider: the provider's
 * description, the client id and the client secret (opened here, only when a token request needs it).
 */
import type { ServiceContext } from '../context.js';
import { findServerProvider, openClientSecret } from '../providers/server-providers.js';
import type { OAuthClientSettings } from './oauth-client.js';

/** Everything a call to the provider needs for this server, or null where the provider is not an enabled OAuth one. */
export async function oauthClientSettings(ctx: ServiceContext, serverId: string, slug: string): Promise<OAuthClientSettings | null> {
  const found = await findServerProvider(ctx, serverId, slug);
  if (!found?.enabled || found.provider.kind !== 'oauth2' || !found.clientId) return null;
  const clientSecret = await openClientSecret(ctx, serverId, slug);
  if (clientSecret === null) return null;
  return { provider: found.provider, clientId: found.clientId, clientSecret, outbound: ctx.outbound };
}
