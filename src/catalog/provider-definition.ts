/** How a provider is described: the same shape for the built-in catalog and for a server's custom providers. */

/**
 * Where the gateway calls the provider's API (CONTRACT 3 and 8): the base URL proxied paths are
 * appended to, and the other hosts a call may pick with `keyward-base-url` (the base URL's host
 * always; a leading `*.` matches subdomains).
 */
export interface ProviderApi {
  apiBaseUrl: string;
  apiHosts?: string[];
  /** Public documentation the base URL (and, for a static provider, `auth` and `verify`) was taken from (the catalog's always). */
  source?: string;
}

/** A static provider's API: also how its values are sent, and the cheap request that checks them. */
export interface StaticProviderApi extends ProviderApi {
  /** `bearer:FIELD`, `header:NAME:TEMPLATE`, `basic:USER_TEMPLATE:PASS_TEMPLATE` or `query:NAME:FIELD` (services/gateway/static-auth.ts). */
  auth: string;
  /** `METHOD /path` ({fieldName} placeholders allowed): 2xx means the values work, 401/403 that they do not. */
  verify?: string;
  /**
   * Fixed headers the provider requires on its `verify` request beyond `auth` (Anthropic's
   * `anthropic-version`, Postmark's `Accept: application/json`): without them the check is answered
   * 400 or 415 and would say nothing about the values. Only the catalog sets them, from the same
   * documentation as the rest; a proxied call's headers are the caller's.
   */
  verifyHeaders?: Readonly<Record<string, string>>;
}

export type TokenEndpointAuth = 'client_secret_basic' | 'client_secret_post';

/**
 * Revocation through the provider's REST API, where it has no RFC 7009 endpoint (GitHub): one request
 * on `api.apiBaseUrl`, the server's OAuth client id and secret as HTTP Basic, the access token in a
 * JSON body. Only the catalog sets it; each entry's `source` says where its documentation has it.
 */
export interface ApiRevocation {
  method: 'DELETE' | 'POST';
  /** The path after `api.apiBaseUrl`, without its leading "/"; `{clientId}` is the client id, percent-encoded. */
  path: string;
  /** The member of the JSON body that carries the access token. */
  tokenField: string;
  /** Headers the documentation asks for besides the Basic authorization and the JSON content type. */
  headers?: Record<string, string>;
  source: string;
}

export interface OAuthProvider {
  kind: 'oauth2';
  slug: string;
  name: string;
  authorizationUrl: string;
  tokenUrl: string;
  /** RFC 7009 revocation endpoint, where the provider has one. */
  revocationUrl?: string;
  /** Where there is none: how its REST API revokes a token (needs `api`). */
  apiRevocation?: ApiRevocation;
  defaultScopes: string[];
  /** How scopes are joined in the authorization URL (RFC 6749 says a space; a few providers want a comma). */
  scopeSeparator: ' ' | ',';
  tokenEndpointAuth: TokenEndpointAuth;
  /** Extra query parameters the authorization request needs, each justified by `source`. */
  extraAuthorizationParams?: Record<string, string>;
  /** The authorization parameter that carries the scopes, where it is not RFC 6749's `scope`. */
  scopeParam?: string;
  /** Where the token response keeps the end user's tokens, where not at its top level (Slack: `authed_user`). */
  tokenResponseRoot?: string;
  /** `none` where the revocation endpoint takes the token as its own proof and no client secret (Slack). */
  revocationClientAuth?: 'none';
  /** `token_type` values the provider answers besides RFC 6750's `bearer` (Slack: `user`). */
  extraTokenTypes?: string[];
  /** Public documentation that the endpoints, scopes and quirks were taken from. */
  source?: string;
  /** Where its documentation says how its API is called: what the gateway proxies to. */
  api?: ProviderApi;
}

export interface StaticField {
  /** camelCase key under which the value is stored and returned. */
  name: string;
  label: string;
  secret: boolean;
  required: boolean;
  /** A JavaScript regular expression (no flags) the whole value must match. */
  pattern?: string;
  /**
   * The whole rule the pattern checks, in words (not just its start: a value that starts right may
   * still be too short), as a phrase without a closing full stop: the message adds one.
   */
  patternHint?: string;
}

export interface StaticProvider {
  kind: 'static';
  slug: string;
  name: string;
  fields: StaticField[];
  source?: string;
  /** Where its documentation says how its API is called and authenticated: what the gateway proxies to and checks with. */
  api?: StaticProviderApi;
}

export type Provider = OAuthProvider | StaticProvider;

export const SLUG_PATTERN = '^[a-z0-9][a-z0-9-]{0,62}$';

/** Whether the gateway can proxy calls to the provider (CONTRACT 8.1, 8.5): it has an API base URL. */
export function proxiable(provider: Provider): boolean {
  return provider.api?.apiBaseUrl !== undefined;
}

/** Whether a static credential of the provider can be checked (CONTRACT 8.3): a static provider with a `verify` request. */
export function checkable(provider: Provider): boolean {
  return provider.kind === 'static' && provider.api?.verify !== undefined;
}
