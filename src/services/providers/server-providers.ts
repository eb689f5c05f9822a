/**
 * Which providers a server can use: the built-in catalog plus the server's custom providers, each
 * working once enabled on that server (OAuth ones with the server's own client, its secret sealed).
 */

import {
  type OAuthProvider,
  type Provider,
  type ProviderApi,
  SLUG_PATTERN,
  type StaticField,
  type StaticProvider,
  type StaticProviderApi,
  type TokenEndpointAuth,
} from '../../catalog/provider-definition.js';
import { browserUrlRefusal, describeRefusal, outboundUrlRefusal } from '../../outbound/address-policy.js';
import { iso } from '../../primitives/clock.js';
import { recordAudit } from '../audit/audit.js';
import type { Actor, ServiceContext } from '../context.js';
import { DomainError, invalid } from '../domain-error.js';
import { providerApiRefusal } from '../gateway/provider-api.js';
import { getServer } from '../servers/servers.js';
import { requireWellFormed } from '../well-formed.js';

const SLUG = new RegExp(SLUG_PATTERN);
const FIELD_NAME = /^[a-zA-Z][a-zA-Z0-9_]{0,63}$/;
const SLUG_RULE = 'the slug must be 1 to 63 lower-case letters, digits and -, starting with a letter or digit';

/** A provider's parts, each under the field name its callers give it, for requireWellFormed. */
function providerInputs(provider: Provider): Record<string, [string, unknown]> {
  return Object.fromEntries(Object.entries(provider).map(([name, value]) => [name === 'defaultScopes' ? 'scopes' : name, [`provider.${name}`, value]]));
}

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

export async function findServerProvider(ctx: ServiceContext, serverId: string, slug: string): Promise<ServerProvider | null> {
  let provider: Provider | undefined = ctx.catalog(slug);
  if (!provider) {
    const definition = await ctx.store.providers.customDefinition(serverId, slug);
    if (definition) provider = JSON.parse(definition) as Provider;
  }
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

function checkScopes(scopes: string[] | undefined): string[] | undefined {
  if (scopes === undefined) return undefined;
  for (const scope of scopes) {
    if (!/^[\x21\x23-\x5b\x5d-\x7e]{1,200}$/.test(scope)) throw invalid('scopes', `"${scope}" is not a valid OAuth scope`);
  }
  return scopes;
}

async function saveEnabled(
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

/** A URL Keyward will call with the client secret, codes and tokens: the outbound policy (CONTRACT 3). */
function checkUrl(ctx: ServiceContext, url: string, field: 'tokenUrl' | 'revocationUrl', what: string): string {
  const refusal = outboundUrlRefusal(url, ctx.outbound.allowPrivateUrls);
  if (refusal) throw invalid(field, describeRefusal(what, refusal));
  return url;
}

/** What the CLI and the dashboard take for a custom provider's API (CONTRACT 3 and 8.5): all optional. */
export interface CustomProviderApiInput {
  apiBaseUrl?: string;
  apiHosts?: string[];
  /** Static providers only. */
  auth?: string;
  /** Static providers only. */
  verify?: string;
}

/**
 * A custom provider's API fields, checked as the catalog's are (gateway/provider-api.ts) and its base
 * URL under the address policy, as a token URL is; undefined where none was given. `fieldNames` for a
 * static provider, null for an OAuth one.
 */
function checkApi(
  ctx: ServiceContext,
  input: CustomProviderApiInput | undefined,
  fieldNames: readonly string[] | null,
): StaticProviderApi | ProviderApi | undefined {
  if (!input) return undefined;
  const { apiBaseUrl, apiHosts = [], auth, verify } = input;
  if (apiBaseUrl === undefined) {
    if (apiHosts.length > 0 || auth !== undefined || verify !== undefined) {
      throw invalid('apiBaseUrl', 'API hosts, auth and verify need an API base URL');
    }
    return undefined;
  }
  const addressRefusal = outboundUrlRefusal(apiBaseUrl, ctx.outbound.allowPrivateUrls);
  if (addressRefusal) throw invalid('apiBaseUrl', describeRefusal('API base URL', addressRefusal));
  // Each host as written too (an IP literal, localhost); a wildcard's subdomains stand in for it.
  for (const host of apiHosts) {
    const hostRefusal = /^[\w.*:-]+$/.test(host) ? outboundUrlRefusal(`https://${host.replace(/^\*\./, 'x.')}`, ctx.outbound.allowPrivateUrls) : null;
    if (hostRefusal) throw invalid('apiHosts', describeRefusal(`API host ${host}`, hostRefusal));
  }
  const api = {
    apiBaseUrl,
    ...(apiHosts.length > 0 ? { apiHosts } : {}),
    ...(auth !== undefined ? { auth } : {}),
    ...(verify !== undefined ? { verify } : {}),
  };
  const refusal = providerApiRefusal(api, fieldNames, ctx.outbound.allowPrivateUrls);
  if (refusal) throw invalid(refusal.field, refusal.reason);
  return api;
}

/** The authorization URL is opened by the end user's browser, never by Keyward: https is all it needs. */
function checkAuthorizationUrl(ctx: ServiceContext, url: string): string {
  const refusal = browserUrlRefusal(url, ctx.outbound.allowPrivateUrls);
  if (refusal) throw invalid('authorizationUrl', describeRefusal('authorization URL', refusal));
  return url;
}

async function addCustomProvider(
  ctx: ServiceContext,
  serverId: string,
  provider: Provider,
  secrets: { clientId?: string; clientSecret?: string },
  actor: Actor,
) {
  if (!SLUG.test(provider.slug)) throw invalid('slug', SLUG_RULE);
  requireWellFormed({ ...providerInputs(provider), clientId: ['client id', secrets.clientId], clientSecret: ['client secret', secrets.clientSecret] });
  if (ctx.catalog(provider.slug)) {
    throw new DomainError('provider_slug_taken', {
      field: 'slug',
      detail: `"${provider.slug}" is a built-in provider: enable it instead, or pick another slug`,
    });
  }
  const server = await getServer(ctx, serverId);
  const now = iso(ctx.clock.now());
  await ctx.store.transaction(async () => {
    const taken = await ctx.store.providers.customDefinition(serverId, provider.slug);
    if (taken !== undefined) throw new DomainError('provider_slug_taken', { field: 'slug', detail: `this server already has a provider "${provider.slug}"` });
    await ctx.store.providers.addCustom({
      server_id: serverId,
      slug: provider.slug,
      kind: provider.kind,
      definition: JSON.stringify(provider),
      created_at: now,
    });
    await saveEnabled(ctx, { serverId, slug: provider.slug, ...secrets, now });
    await recordAudit(ctx, {
      accountId: server.account_id,
      serverId,
      actor,
      action: 'provider.added',
      targetId: provider.slug,
      detail: { provider: provider.slug, kind: provider.kind },
      at: now,
    });
  });
  return { serverId, provider: provider.slug };
}

export async function addCustomOAuthProvider(
  ctx: ServiceContext,
  input: {
    serverId: string;
    slug: string;
    name?: string;
    authorizationUrl: string;
    tokenUrl: string;
    revocationUrl?: string;
    clientId: string;
    clientSecret: string;
    scopes?: string[];
    tokenAuth?: string;
    api?: CustomProviderApiInput;
    actor: Actor;
  },
) {
  const tokenAuth = (input.tokenAuth ?? 'client_secret_basic') as TokenEndpointAuth;
  if (tokenAuth !== 'client_secret_basic' && tokenAuth !== 'client_secret_post') {
    throw invalid('tokenAuth', 'the token endpoint authentication must be client_secret_basic or client_secret_post');
  }
  if (!input.clientId || !input.clientSecret)
    throw invalid(input.clientId ? 'clientSecret' : 'clientId', 'a custom OAuth provider needs a client id and secret');
  const provider: OAuthProvider = {
    kind: 'oauth2',
    slug: input.slug,
    name: input.name || input.slug,
    authorizationUrl: checkAuthorizationUrl(ctx, input.authorizationUrl),
    tokenUrl: checkUrl(ctx, input.tokenUrl, 'tokenUrl', 'token URL'),
    ...(input.revocationUrl ? { revocationUrl: checkUrl(ctx, input.revocationUrl, 'revocationUrl', 'revocation URL') } : {}),
    defaultScopes: checkScopes(input.scopes) ?? [],
    scopeSeparator: ' ',
    tokenEndpointAuth: tokenAuth,
  };
  const api = checkApi(ctx, input.api, null);
  if (api) provider.api = api;
  return addCustomProvider(ctx, input.serverId, provider, { clientId: input.clientId, clientSecret: input.clientSecret }, input.actor);
}

/** Parses `name:Label[:secret][:optional]`, the CLI's way of describing one field. */
export function parseFieldSpec(spec: string): StaticField {
  const [name = '', label = '', ...flags] = spec.split(':');
  if (!FIELD_NAME.test(name)) throw invalid('fields', `field "${spec}": the name must be letters, digits and _ (starting with a letter)`);
  if (!label.trim() || label.length > 100) throw invalid('fields', `field "${spec}": the label must be 1 to 100 characters`);
  for (const flag of flags) {
    if (flag !== 'secret' && flag !== 'optional') throw invalid('fields', `field "${spec}": "${flag}" is neither secret nor optional`);
  }
  return { name, label: label.trim(), secret: flags.includes('secret'), required: !flags.includes('optional') };
}

export async function addCustomStaticProvider(
  ctx: ServiceContext,
  input: { serverId: string; slug: string; name?: string; fields: StaticField[]; api?: CustomProviderApiInput; actor: Actor },
) {
  if (input.fields.length === 0 || input.fields.length > 20) throw invalid('fields', 'a static provider needs 1 to 20 fields');
  const names = new Set(input.fields.map((f) => f.name));
  if (names.size !== input.fields.length) throw invalid('fields', 'field names must be unique');
  const provider: StaticProvider = { kind: 'static', slug: input.slug, name: input.name || input.slug, fields: input.fields };
  // Checked with the fields: a static provider's API has its auth (checkApi refuses one without).
  const api = checkApi(ctx, input.api, [...names]) as StaticProviderApi | undefined;
  if (api) provider.api = api;
  return addCustomProvider(ctx, input.serverId, provider, {}, input.actor);
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
      },
    ];
  });
}
