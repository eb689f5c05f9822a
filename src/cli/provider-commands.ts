/** `keyward provider …`: the providers a server offers, from the catalog or its own. */
import { CLI_ACTOR } from '../services/context.js';
import { DomainError } from '../services/domain-error.js';
import { VERIFY } from '../services/gateway/provider-api.js';
import { staticAuthShapeRefusal } from '../services/gateway/static-auth.js';
import { addCustomOAuthProvider, addCustomStaticProvider, parseFieldSpec } from '../services/providers/custom-providers.js';
import { listProviderChoices, type ProviderChoice } from '../services/providers/provider-choices.js';
import { enableProvider } from '../services/providers/server-providers.js';
import { type Command, list, type Options, oneOf, optional, str, wellFormed } from './commands.js';
import { UsageError } from './parse-options.js';

/** One `--field name:Label[:secret][:optional]`; one of another shape is a usage error naming the flag. */
function fieldOf(spec: string) {
  try {
    return parseFieldSpec(spec);
  } catch (error) {
    if (error instanceof DomainError) throw new UsageError(`--field ${error.detail}`);
    throw error;
  }
}

/** `--api-base-url` and `--api-host …` (both kinds), `--auth` and `--verify` (static): the provider's API for the gateway (CONTRACT 4 and 8.5). */
const API_OPTIONS = {
  'api-base-url': { type: 'string' },
  'api-host': { type: 'string', multiple: true },
} as const;
const STATIC_API_OPTIONS = { ...API_OPTIONS, auth: { type: 'string' }, verify: { type: 'string' } } as const;

const TOKEN_AUTH = ['client_secret_basic', 'client_secret_post'] as const;

/**
 * The API flags' shapes, checked before the service sees them (CONTRACT 4: a malformed value is a usage
 * error naming its flag). What only the provider can judge (a field `--auth` names, an address the
 * policy refuses, http without KEYWARD_ALLOW_PRIVATE_URLS) stays the service's refusal.
 */
function apiInput(o: Options) {
  wellFormed(o, 'api-base-url', (value) => (URL.canParse(value) ? null : 'must be a URL'));
  // A scheme, a path, a user or a space makes no host; which names and wildcards may be used is the service's to say.
  wellFormed(o, 'api-host', (value) => (/^[^\s/@]+$/.test(value) ? null : 'must be a host (name[:port], or *.name)'));
  return { apiBaseUrl: optional(o, 'api-base-url'), apiHosts: (o['api-host'] as string[] | undefined) ?? [] };
}

function staticApiInput(o: Options) {
  wellFormed(o, 'auth', staticAuthShapeRefusal);
  wellFormed(o, 'verify', (value) => (VERIFY.test(value) ? null : 'must be "GET /path", "HEAD /path" or "POST /path"'));
  return { ...apiInput(o), auth: optional(o, 'auth'), verify: optional(o, 'verify') };
}

export const commands: Record<string, Command> = {
  'provider enable': {
    usage: 'provider enable --server S --provider P [--client-id ID --client-secret SECRET --scopes a,b]',
    options: {
      server: { type: 'string', required: true },
      provider: { type: 'string', required: true },
      'client-id': { type: 'string' },
      'client-secret': { type: 'string' },
      scopes: { type: 'string' },
    },
    run: (ctx, o) =>
      enableProvider(ctx, {
        serverId: str(o, 'server'),
        slug: str(o, 'provider'),
        clientId: optional(o, 'client-id'),
        clientSecret: optional(o, 'client-secret'),
        scopes: list(optional(o, 'scopes')),
        actor: CLI_ACTOR,
      }),
    text: (r) => `Provider ${r.provider} enabled on ${r.serverId}.`,
  },
  'provider add-oauth': {
    usage:
      'provider add-oauth --server S --slug P --authorization-url U --token-url U [--revocation-url U] --client-id ID --client-secret SECRET [--scopes a,b] [--token-auth client_secret_basic|client_secret_post] [--name N] [--api-base-url U] [--api-host H …]',
    options: {
      server: { type: 'string', required: true },
      slug: { type: 'string', required: true },
      name: { type: 'string' },
      'authorization-url': { type: 'string', required: true },
      'token-url': { type: 'string', required: true },
      'revocation-url': { type: 'string' },
      'client-id': { type: 'string', required: true },
      'client-secret': { type: 'string', required: true },
      scopes: { type: 'string' },
      'token-auth': { type: 'string' },
      ...API_OPTIONS,
    },
    run: (ctx, o) =>
      addCustomOAuthProvider(ctx, {
        serverId: str(o, 'server'),
        slug: str(o, 'slug'),
        name: optional(o, 'name'),
        authorizationUrl: str(o, 'authorization-url'),
        tokenUrl: str(o, 'token-url'),
        revocationUrl: optional(o, 'revocation-url'),
        clientId: str(o, 'client-id'),
        clientSecret: str(o, 'client-secret'),
        scopes: list(optional(o, 'scopes')),
        tokenAuth: oneOf(o, 'token-auth', TOKEN_AUTH),
        api: apiInput(o),
        actor: CLI_ACTOR,
      }),
    text: (r) => `Custom OAuth provider ${r.provider} added to ${r.serverId} and enabled.`,
  },
  'provider add-static': {
    usage:
      'provider add-static --server S --slug P --field name:Label[:secret][:optional] … [--name N] [--api-base-url U] [--api-host H …] [--auth bearer:F|header:N:T|basic:U:P|query:N:F] [--verify "GET /path"]',
    options: {
      server: { type: 'string', required: true },
      slug: { type: 'string', required: true },
      name: { type: 'string' },
      field: { type: 'string', multiple: true, required: true },
      ...STATIC_API_OPTIONS,
    },
    run: (ctx, o) =>
      addCustomStaticProvider(ctx, {
        serverId: str(o, 'server'),
        slug: str(o, 'slug'),
        name: optional(o, 'name'),
        fields: (o.field as string[]).map(fieldOf),
        api: staticApiInput(o),
        actor: CLI_ACTOR,
      }),
    text: (r) => `Custom static provider ${r.provider} added to ${r.serverId} and enabled.`,
  },
  'provider list': {
    usage: 'provider list --server S',
    options: { server: { type: 'string', required: true } },
    run: async (ctx, o) => ({ providers: await listProviderChoices(ctx, str(o, 'server')) }),
    text: (r) =>
      (r.providers as ProviderChoice[])
        .map(
          (p) =>
            `${p.slug}  "${p.name}"  ${p.kind}  ${p.custom ? 'custom' : 'catalog'}  ${p.enabled ? 'enabled' : 'not enabled'}  ${p.proxy ? 'proxy' : 'no proxy'}  ${p.checked ? 'checked' : 'not checked'}`,
        )
        .join('\n'),
  },
};
