/**
 * Which providers a server can use: the built-in catalog plus the server's custom providers (defined
 * in custom-providers.ts), each working once enabled on that server (OAuth ones with the server's own
 * client, its secret sealed).
 */

import { checkable, type Provider, proxiable } from '../../catalog/provider-definition.js';
import { iso } from '../../primitives/clock.js';
import { recordAudit } from '../audit/audit.js';
import type { Actor, ServiceContext } from '../context.js';
import { DomainError, invalid } from '../domain-error.js';
import { getServer } from '../servers/servers.js';
import { requireWellFormed } from '../well-formed.js';

export interface ServerProvider {
  provider: Provider;
  enabled: boolean;
  clientId: string | null;
  /** Scopes set for this server, replacing the provider's defaults; null keeps the defaults. */
  scopes: string[] | null;
}

export function clientSecretAad(serverId: string, slug: string): string {
  return `server_providers|${serverId}|${slug}`;
}

/** A provider of the catalog (no I/O) or one of the server's own; null where neither has that slug. */
export async function findProviderDefinition(ctx: ServiceContext, serverId: string, slug: string): Promise<Provider | null> {
  const provider = ctx.catalog(slug);
  if (provider) return provider;
  const definition = await ctx.store.providers.customDefinition(serverId, slug);
  return definition ? (JSON.parse(definition) as Provider) : null;
}

export async function findServerProvider(ctx: ServiceContext, serverId: string, slug: string): Promise<ServerProvider | null> {
  const provider = await findProviderDefinition(ctx, serverId, slug);
  if (!provider) return null;
  const enabled = await ctx.store.providers.findEnabled(serverId, slug);
  return {
    provider,
    enabled: enabled !== undefined,
    clientId: enabled?.client_id ?? null,
    scopes: enabled?.scopes ? (JSON.parse(enabled.scopes) as string[]) : null,
  };
}

/** The OAuth client secret of a server's provider, opened only when a token request needs it. */
export async function openClientSecret(ctx: ServiceContext, serverId: string, slug: string): Promise<string | null> {
  const sealed = await ctx.store.providers.sealedClientSecret(serverId, slug);
  return sealed ? ctx.vault.open(sealed, clientSecretAad(serverId, slug)) : null;
}

/** The scopes as given, each checked as RFC 6749 allows a scope to be written. */
export function checkScopes(scopes: string[] | undefined): string[] | undefined {
  if (scopes === undefined) return undefined;
  for (const scope of scopes) {
    if (!/^[\x21\x23-\x5b\x5d-\x7e]{1,200}$/.test(scope)) throw invalid('scopes', `"${scope}" is not a valid OAuth scope`);
  }
  return scopes;
}

/** Enables the provider on the server (its OAuth client sealed), inside the caller's transaction. */
export async function saveEnabled(
  ctx: ServiceContext,
  input: { serverId: string; slug: string; clientId?: string; clientSecret?: string; scopes?: string[]; now: string },
) {
  await ctx.store.providers.enable(input.serverId, input.slug, {
    client_id: input.clientId ?? null,
    client_secret: input.clientSecret ? ctx.vault.seal(input.clientSecret, clientSecretAad(input.serverId, input.slug)) : null,
    scopes: input.scopes ? JSON.stringify(input.scopes) : null,
    enabled_at: input.now,
  });
}

/** Enables a provider of the catalog, or updates its OAuth client, on one server. */
export async function enableProvider(
  ctx: ServiceContext,
  input: { serverId: string; slug: string; clientId?: string; clientSecret?: string; scopes?: string[]; actor: Actor },
): Promise<{ serverId: string; provider: string }> {
  const server = await getServer(ctx, input.serverId);
  requireWellFormed({ clientId: ['client id', input.clientId], clientSecret: ['client secret', input.clientSecret] });
  const found = await findServerProvider(ctx, input.serverId, input.slug);
  if (!found) {
    throw new DomainError('provider_not_found', {
      field: 'provider',
      detail: `no provider "${input.slug}" in the catalog or among this server's custom providers`,
    });
  }
  if (found.provider.kind === 'oauth2' && (!input.clientId || !input.clientSecret)) {
    const field = input.clientId ? 'clientSecret' : 'clientId';
    throw invalid(field, `${found.provider.name} is an OAuth provider: give the OAuth client id and secret of your app`);
  }
  if (found.provider.kind === 'static' && (input.clientId || input.clientSecret || input.scopes)) {
    // The first OAuth input given is the one to take away.
    const field = input.clientId ? 'clientId' : input.clientSecret ? 'clientSecret' : 'scopes';
    throw invalid(field, `${found.provider.name} takes static credentials: it has no OAuth client or scopes`);
  }
  const now = iso(ctx.clock.now());
  await ctx.store.transaction(async () => {
    await saveEnabled(ctx, { ...input, scopes: checkScopes(input.scopes), now });
    await recordAudit(ctx, {
      accountId: server.account_id,
      serverId: input.serverId,
      actor: input.actor,
      action: 'provider.enabled',
      targetId: input.slug,
      detail: { provider: input.slug, clientId: input.clientId ?? null },
      at: now,
    });
  });
  return { serverId: input.serverId, provider: input.slug };
}

export interface EnabledProviderView {
  slug: string;
  name: string;
  kind: 'oauth2' | 'static';
  /** A server's own provider, not one of the built-in catalog. */
  custom: boolean;
  clientId: string | null;
  /** The scopes an authorization asks for (OAuth only): the server's own, else the provider's defaults. */
  scopes: string[];
  /** True where `scopes` are a catalog provider's defaults (a custom provider's defaults are the ones typed for it). */
  defaultScopes: boolean;
  enabledAt: string;
  /** The gateway can proxy calls to it (an API base URL), and check its static credentials (a `verify` request). */
  proxy: boolean;
  checked: boolean;
}

/**
 * The providers enabled on one server, for the dashboard's Providers tab: names and OAuth client ids,
 * never the sealed client secret (it is not even selected).
 */
export async function listServerProviders(ctx: ServiceContext, serverId: string): Promise<EnabledProviderView[]> {
  const rows = await ctx.store.providers.listEnabled(serverId);
  return rows.flatMap((row) => {
    const provider = ctx.catalog(row.provider) ?? (row.definition ? (JSON.parse(row.definition) as Provider) : undefined);
    if (!provider) return [];
    const custom = !ctx.catalog(row.provider);
    const own = row.scopes ? (JSON.parse(row.scopes) as string[]) : null;
    return [
      {
        slug: row.provider,
        name: provider.name,
        kind: provider.kind,
        custom,
        clientId: row.client_id,
        scopes: own ?? (provider.kind === 'oauth2' ? provider.defaultScopes : []),
        defaultScopes: own === null && !custom,
        enabledAt: row.enabled_at,
        proxy: proxiable(provider),
        checked: checkable(provider),
      },
    ];
  });
}
