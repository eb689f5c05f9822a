/**
 * Keyward as an OAuth 2.0 client, through oauth4webapi (a certified library): PKCE, the code exchange,
 * refresh and RFC 7009 revocation. This file only adapts a provider's description to the library and
 * sorts the library's errors into what the callers act on. Every request goes out through the outbound
 * module (the library's customFetch), which owns the address policy, the timeout and the size cap.
 */
import * as oauth from 'oauth4webapi';
import type { OAuthProvider } from '../../catalog/provider-definition.js';
import { OutboundError, type OutboundHttp } from '../../outbound/outbound-http.js';
import { addSeconds, iso } from '../../primitives/clock.js';

/** One server's client at one provider, with the secret opened for this request only. */
export interface OAuthClientSettings {
  provider: OAuthProvider;
  clientId: string;
  clientSecret: string;
  /** The only way out to the provider: policy-checked, pinned, time- and size-limited. */
  outbound: OutboundHttp;
}

/** Tokens are stored and served on every read: a provider cannot make Keyward keep more (CONTRACT 3). */
export const MAX_TOKEN_BYTES = 16 * 1024;

/**
 * The granted `scope` is stored (credentials.scopes) and served on every read too, so it has the
 * tokens' cap. `token_type` is sealed into the secret; real ones are a word ("Bearer", "DPoP", Slack's
 * "user", RFC 6750 / 9449 names), so 64 characters is generous, and a longer one is no token type.
 */
export const MAX_TOKEN_TYPE_LENGTH = 64;

export interface TokenSet {
  accessToken: string;
  refreshToken: string | null;
  tokenType: string;
  /** Null where the provider gives no lifetime (GitHub's OAuth App tokens never expire). */
  expiresAt: string | null;
  /** The scopes granted, where the provider says; null where it does not. */
  scopes: string[] | null;
}

/**
 * A provider call that did not give tokens. `rejected`: the provider answered with an OAuth error
 * (`error` holds its RFC 6749 code, such as invalid_grant). `unavailable`: a timeout, a network error,
 * a 5xx or an answer that is not OAuth at all; trying again later may work.
 */
export class ProviderCallError extends Error {
  constructor(
    readonly kind: 'rejected' | 'unavailable',
    readonly error: string | null,
    message: string,
  ) {
    super(message);
    this.name = 'ProviderCallError';
  }
}

function authorizationServer(provider: OAuthProvider): oauth.AuthorizationServer {
  return {
    // Keyward keeps no ID token and checks no `iss` (see withoutIdentity), so the issuer is only a label.
    issuer: new URL(provider.authorizationUrl).origin,
    authorization_endpoint: provider.authorizationUrl,
    token_endpoint: provider.tokenUrl,
    ...(provider.revocationUrl ? { revocation_endpoint: provider.revocationUrl } : {}),
  };
}

function clientAuth(settings: OAuthClientSettings): oauth.ClientAuth {
  return settings.provider.tokenEndpointAuth === 'client_secret_basic'
    ? oauth.ClientSecretBasic(settings.clientSecret)
    : oauth.ClientSecretPost(settings.clientSecret);
}

function requestOptions(settings: OAuthClientSettings) {
  // Plain http only where KEYWARD_ALLOW_PRIVATE_URLS allows it; the outbound module checks that again.
  return { [oauth.customFetch]: settings.outbound.fetch, [oauth.allowInsecureRequests]: settings.outbound.allowPrivateUrls };
}

export function authorizationUrl(
  settings: Pick<OAuthClientSettings, 'provider' | 'clientId'>,
  input: { redirectUri: string; scopes: string[]; state: string; codeChallenge: string },
): string {
  const { provider } = settings;
  const url = new URL(provider.authorizationUrl);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', settings.clientId);
  url.searchParams.set('redirect_uri', input.redirectUri);
  if (input.scopes.length) url.searchParams.set(provider.scopeParam ?? 'scope', input.scopes.join(provider.scopeSeparator));
  url.searchParams.set('state', input.state);
  url.searchParams.set('code_challenge', input.codeChallenge);
  url.searchParams.set('code_challenge_method', 'S256');
  for (const [name, value] of Object.entries(provider.extraAuthorizationParams ?? {})) url.searchParams.set(name, value);
  return url.toString();
}

/** A fresh PKCE pair and state; only the challenge and the state leave the service. */
export async function newAuthorizationSecrets(): Promise<{ state: string; verifier: string; challenge: string }> {
  const verifier = oauth.generateRandomCodeVerifier();
  return { state: oauth.generateRandomState(), verifier, challenge: await oauth.calculatePKCECodeChallenge(verifier) };
}

/**
 * The token response as RFC 6749 shapes it, before the library reads it. Keyward does not sign anyone
 * in, so an ID token is neither checked nor kept; GitHub and Slack answer errors with a 200 and an
 * `error` field, which is turned into the 400 it means; Slack's user token sits under `authed_user`.
 */
async function normalizedTokenResponse(provider: OAuthProvider, response: Response): Promise<Response> {
  if (response.status !== 200) return response;
  let body: Record<string, unknown>;
  try {
    body = (await response.json()) as Record<string, unknown>;
  } catch {
    throw new ProviderCallError('unavailable', null, 'the token endpoint answered something that is not JSON');
  }
  if (typeof body !== 'object' || body === null) throw new ProviderCallError('unavailable', null, 'the token endpoint answered no JSON object');
  let status = 200;
  if (typeof body.error === 'string') status = 400;
  else if (provider.tokenResponseRoot) {
    const root = body[provider.tokenResponseRoot];
    body = typeof root === 'object' && root !== null ? (root as Record<string, unknown>) : {};
  }
  delete body.id_token;
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

function tokenSet(response: oauth.TokenEndpointResponse, now: Date): TokenSet {
  for (const token of [response.access_token, response.refresh_token]) {
    if (typeof token === 'string' && Buffer.byteLength(token, 'utf8') > MAX_TOKEN_BYTES) {
      throw new ProviderCallError('unavailable', null, `the provider answered a token over ${MAX_TOKEN_BYTES} bytes`);
    }
  }
  if (typeof response.scope === 'string' && Buffer.byteLength(response.scope, 'utf8') > MAX_TOKEN_BYTES) {
    throw new ProviderCallError('unavailable', null, `the provider answered a scope over ${MAX_TOKEN_BYTES} bytes`);
  }
  if (response.token_type.length > MAX_TOKEN_TYPE_LENGTH) {
    throw new ProviderCallError('unavailable', null, `the provider answered a token_type over ${MAX_TOKEN_TYPE_LENGTH} characters`);
  }
  const scope = typeof response.scope === 'string' ? response.scope.split(/[ ,]+/).filter(Boolean) : null;
  return {
    accessToken: response.access_token,
    refreshToken: response.refresh_token ?? null,
    tokenType: response.token_type,
    expiresAt: typeof response.expires_in === 'number' ? iso(addSeconds(now, response.expires_in)) : null,
    scopes: scope,
  };
}

function processingOptions(provider: OAuthProvider): oauth.ProcessTokenResponseOptions {
  const noop = () => undefined;
  return { recognizedTokenTypes: Object.fromEntries((provider.extraTokenTypes ?? []).map((type) => [type, noop])) };
}

/** Sorts what the library or the network threw into the two kinds the callers act on. */
function classify(error: unknown): ProviderCallError {
  if (error instanceof ProviderCallError) return error;
  // Refused addresses, redirects and oversized answers included: nothing usable came back.
  if (error instanceof OutboundError) return new ProviderCallError('unavailable', null, error.message);
  if (error instanceof oauth.ResponseBodyError) {
    const kind = error.status >= 500 ? 'unavailable' : 'rejected';
    return new ProviderCallError(kind, error.error, `the provider answered ${error.status} ${error.error}`);
  }
  if (error instanceof oauth.AuthorizationResponseError) return new ProviderCallError('rejected', error.error, `the provider answered ${error.error}`);
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return new ProviderCallError('unavailable', null, 'the provider did not answer in time');
  }
  if (error instanceof oauth.OperationProcessingError)
    return new ProviderCallError('unavailable', null, `the provider's answer was not usable (${error.code ?? 'invalid'})`);
  return new ProviderCallError('unavailable', null, 'the provider could not be reached');
}

/**
 * The redirect's parameters checked by the library: an `error` there becomes a `rejected` error.
 * `state` was already matched by the flow lookup, and `iss` (RFC 9207) is dropped: custom providers
 * have no known issuer, and a flow's state already binds it to one provider.
 */
export function callbackParameters(settings: OAuthClientSettings, query: URLSearchParams, state: string): URLSearchParams {
  const params = new URLSearchParams(query);
  params.delete('iss');
  try {
    return oauth.validateAuthResponse(authorizationServer(settings.provider), { client_id: settings.clientId }, params, state);
  } catch (error) {
    throw classify(error);
  }
}

export async function exchangeCode(
  settings: OAuthClientSettings,
  input: { parameters: URLSearchParams; redirectUri: string; verifier: string; now: Date },
): Promise<TokenSet> {
  const as = authorizationServer(settings.provider);
  const client = { client_id: settings.clientId };
  try {
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      clientAuth(settings),
      input.parameters,
      input.redirectUri,
      input.verifier,
      requestOptions(settings),
    );
    const processed = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await normalizedTokenResponse(settings.provider, response),
      processingOptions(settings.provider),
    );
    return tokenSet(processed, input.now);
  } catch (error) {
    throw classify(error);
  }
}

export async function refreshTokens(settings: OAuthClientSettings, refreshToken: string, now: Date): Promise<TokenSet> {
  const as = authorizationServer(settings.provider);
  const client = { client_id: settings.clientId };
  try {
    const response = await oauth.refreshTokenGrantRequest(as, client, clientAuth(settings), refreshToken, requestOptions(settings));
    const processed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await normalizedTokenResponse(settings.provider, response),
      processingOptions(settings.provider),
    );
    return tokenSet(processed, now);
  } catch (error) {
    throw classify(error);
  }
}

/** Slack answers a refused revocation with a 200 and `{"ok":false,"error":…}`: that is a refusal, not a yes. */
async function refuseOkFalse(response: Response): Promise<void> {
  if (!response.headers.get('content-type')?.includes('json')) return;
  const body = (await response.json().catch(() => null)) as { ok?: unknown; error?: unknown } | null;
  if (body && (body.ok === false || typeof body.error === 'string')) {
    throw new ProviderCallError('rejected', typeof body.error === 'string' ? body.error : null, 'the provider refused the revocation');
  }
}

/** RFC 7009: asks the provider to revoke one token. Throws a ProviderCallError when it did not say yes. */
export async function revokeToken(settings: OAuthClientSettings, token: string, hint: 'refresh_token' | 'access_token'): Promise<void> {
  const as = authorizationServer(settings.provider);
  try {
    // Slack's auth.revoke authenticates with the token itself, so its client secret is not sent there.
    const auth = settings.provider.revocationClientAuth === 'none' ? oauth.None() : clientAuth(settings);
    const response = await oauth.revocationRequest(as, { client_id: settings.clientId }, auth, token, {
      ...requestOptions(settings),
      additionalParameters: { token_type_hint: hint },
    });
    await oauth.processRevocationResponse(response);
    await refuseOkFalse(response);
  } catch (error) {
    throw classify(error);
  }
}
