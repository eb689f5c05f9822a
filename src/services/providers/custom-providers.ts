/**
 * A server's own providers (CONTRACT 3 and 4): an OAuth 2.0 provider with its endpoints and client, or
 * a static one with its fields, each with the API the gateway calls where one is given; checked as the
 * catalog's are, stored, enabled on the server and audited together.
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
import { checkScopes, saveEnabled } from './server-providers.js';

const SLUG = new RegExp(SLUG_PATTERN);
const FIELD_NAME = /^[a-zA-Z][a-zA-Z0-9_]{0,63}$/;
const SLUG_RULE = 'the slug must be 1 to 63 lower-case letters, digits and -, starting with a letter or digit';

/** A provider's parts, each under the field name its callers give it, for requireWellFormed. */
function providerInputs(provider: Provider): Record<string, [string, unknown]> {
  return Object.fromEntries(Object.entries(provider).map(([name, value]) => [name === 'defaultScopes' ? 'scopes' : name, [`provider.${name}`, value]]));
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
