/**
 * An account's OpenID Connect provider as Keyward talks to it (CONTRACT 9), through oauth4webapi (a
 * certified client library): discovery, the authorization URL (code flow, PKCE with S256, `state`,
 * `nonce`, the default query response mode), the code exchange authenticated with
 * client_secret_basic (client_secret_post where discovery offers only that), and the ID token's
 * checks: `iss`, `aud`, `exp` and `nonce` by the library as it reads the token response, then the
 * signature against the keys the issuer publishes (its JWKS). This file only adapts the library and
 * turns its errors into sentences a person can act on; it never passes on the provider's own error
 * text, which is the provider's to word and may say anything.
 *
 * Every request goes out through ctx.outbound (the library's customFetch), which owns the address
 * policy of CONTRACT 3 (checked again at call time, the pinned lookup), the timeout, no redirects
 * and the 1 MiB cap on an answer: a discovery document or a JWKS past it is refused.
 */
import * as oauth from 'oauth4webapi';
import { browserUrlRefusal, outboundUrlRefusal } from '../../outbound/address-policy.js';
import { OutboundError } from '../../outbound/outbound-http.js';
import type { ServiceContext } from '../context.js';

/** The scopes asked for: the ID token and the person's email in it. */
const SCOPES = 'openid email';

export type TokenEndpointAuth = 'client_secret_basic' | 'client_secret_post';

/** A provider as its discovery document describes it, checked. */
export interface DiscoveredProvider {
  as: oauth.AuthorizationServer;
  tokenAuth: TokenEndpointAuth;
}

/** Discovery failed: `reason` ends the sentence "Keyward cannot use {issuer} as an OpenID Connect issuer: {reason}". */
export class DiscoveryError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'DiscoveryError';
  }
}

/** A callback that signs nobody in: `reason` is the whole sentence the 400 page shows. */
export class SsoCallbackError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'SsoCallbackError';
  }
}

/** The library's requests go out through the outbound module only; plain http only where the policy allows it. */
function requestOptions(ctx: ServiceContext) {
  return { [oauth.customFetch]: ctx.outbound.fetch, [oauth.allowInsecureRequests]: ctx.outbound.allowPrivateUrls };
}

/** A failed call, in words: `endpoint` is what was called, `answer` what it sent back ("its JWKS"). */
function callFailure(error: OutboundError, endpoint: string, answer: string): string {
  switch (error.kind) {
    case 'too_large':
      return `${answer} is over 1 MiB, more than Keyward reads`;
    case 'redirect':
      return `${endpoint} answered a redirect, which Keyward does not follow`;
    case 'refused':
      return `${endpoint} is at an address Keyward may not call (${error.message})`;
    case 'timeout':
      return `${endpoint} did not answer in time`;
    default:
      return `${endpoint} could not be reached`;
  }
}

/** The issuer's URLs under the address policy: those Keyward calls as any URL it calls, the browser's as a browser URL. */
function endpointRefusal(ctx: ServiceContext, as: oauth.AuthorizationServer): string | null {
  const endpoints: [string, unknown, 'keyward' | 'browser'][] = [
    ['authorization endpoint', as.authorization_endpoint, 'browser'],
    ['token endpoint', as.token_endpoint, 'keyward'],
    ['JWKS (jwks_uri)', as.jwks_uri, 'keyward'],
  ];
  for (const [what, url, caller] of endpoints) {
    if (typeof url !== 'string') return `its discovery document names no ${what}`;
    const refusal = caller === 'keyward' ? outboundUrlRefusal(url, ctx.outbound.allowPrivateUrls) : browserUrlRefusal(url, ctx.outbound.allowPrivateUrls);
    if (refusal) return `its ${what} ${refusal.reason}`;
  }
  return null;
}

/** What the discovery document offers that Keyward needs, or why it does not. */
function capabilityRefusal(as: oauth.AuthorizationServer): string | null {
  const lacks = (list: unknown, value: string) => Array.isArray(list) && !list.includes(value);
  if (lacks(as.response_types_supported, 'code')) return 'it does not offer the authorization code flow (response type "code")';
  if (lacks(as.response_modes_supported, 'query')) return 'it does not offer the query response mode';
  if (lacks(as.code_challenge_methods_supported, 'S256')) return 'it does not offer PKCE with S256';
  return null;
}

/** client_secret_basic, unless discovery offers client_secret_post and not basic (an absent list means basic, RFC 8414). */
function tokenEndpointAuth(as: oauth.AuthorizationServer): TokenEndpointAuth | null {
  const methods = as.token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
  if (methods.includes('client_secret_basic')) return 'client_secret_basic';
  if (methods.includes('client_secret_post')) return 'client_secret_post';
  return null;
}

/**
 * Fetches and checks the issuer's discovery document (`{issuer}/.well-known/openid-configuration`):
 * it must name this very issuer, offer what Keyward uses, and every URL in it must pass the address
 * policy. Throws a DiscoveryError saying what is wrong.
 */
export async function discoverProvider(ctx: ServiceContext, issuer: string): Promise<DiscoveredProvider> {
  const issuerUrl = new URL(issuer);
  let as: oauth.AuthorizationServer;
  try {
    const response = await oauth.discoveryRequest(issuerUrl, { ...requestOptions(ctx), algorithm: 'oidc' });
    if (response.status !== 200) throw new DiscoveryError(`its discovery document answered HTTP ${response.status}`);
    as = await oauth.processDiscoveryResponse(issuerUrl, response);
  } catch (error) {
    if (error instanceof DiscoveryError) throw error;
    if (error instanceof OutboundError) throw new DiscoveryError(callFailure(error, 'its discovery endpoint', 'its discovery document'));
    if (error instanceof oauth.OperationProcessingError && error.code === oauth.JSON_ATTRIBUTE_COMPARISON) {
      throw new DiscoveryError('its discovery document names another issuer');
    }
    throw new DiscoveryError('its discovery document is not OpenID Connect metadata (JSON)');
  }
  const refused = endpointRefusal(ctx, as) ?? capabilityRefusal(as);
  if (refused) throw new DiscoveryError(refused);
  const tokenAuth = tokenEndpointAuth(as);
  if (!tokenAuth) throw new DiscoveryError('its token endpoint takes neither client_secret_basic nor client_secret_post');
  return { as, tokenAuth };
}

/**
 * Reads the issuer's JWKS once, as the signature check will: an answer of at most 1 MiB holding a
 * `keys` list. Saving the settings checks it so that a provider whose keys cannot be read is refused
 * then, not at the first sign-in.
 */
export async function checkSigningKeys(ctx: ServiceContext, provider: DiscoveredProvider): Promise<void> {
  let response: Response;
  try {
    response = await ctx.outbound.fetch(provider.as.jwks_uri!, { headers: { accept: 'application/json, application/jwk-set+json' } });
  } catch (error) {
    if (error instanceof OutboundError) throw new DiscoveryError(callFailure(error, 'its JWKS endpoint (jwks_uri)', 'its JWKS'));
    throw error;
  }
  if (response.status !== 200) throw new DiscoveryError(`its JWKS (jwks_uri) answered HTTP ${response.status}`);
  const body = (await response.json().catch(() => null)) as { keys?: unknown } | null;
  if (!body || !Array.isArray(body.keys) || body.keys.length === 0) throw new DiscoveryError('its JWKS (jwks_uri) holds no keys');
}

/** What a sign-in keeps until the callback: the values the provider must give back, and the PKCE verifier. */
export interface AuthorizationSecrets {
  state: string;
  nonce: string;
  verifier: string;
}

export function newAuthorizationSecrets(): AuthorizationSecrets {
  return { state: oauth.generateRandomState(), nonce: oauth.generateRandomNonce(), verifier: oauth.generateRandomCodeVerifier() };
}

/** The URL the browser is sent to: the authorization code flow with PKCE, `state` and `nonce` (query response mode, the code flow's default). */
export async function authorizationUrl(
  provider: DiscoveredProvider,
  input: { clientId: string; redirectUri: string; secrets: AuthorizationSecrets; loginHint?: string },
): Promise<string> {
  const url = new URL(provider.as.authorization_endpoint!);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', input.clientId);
  url.searchParams.set('redirect_uri', input.redirectUri);
  url.searchParams.set('scope', SCOPES);
  url.searchParams.set('state', input.secrets.state);
  url.searchParams.set('nonce', input.secrets.nonce);
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(input.secrets.verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  if (input.loginHint) url.searchParams.set('login_hint', input.loginHint);
  return url.toString();
}

/** Who the provider says signed in: the ID token's `sub`, and its `email` if it is verified. */
export interface VerifiedIdentity {
  subject: string;
  /** Lower-case. */
  email: string;
}

/** Why the ID token's claims were refused, by the claim the library named. */
const CLAIM_REFUSALS: Record<string, string> = {
  aud: 'it was issued for another application (its audience is not this client id)',
  iss: 'it was issued by another issuer',
  nonce: 'it does not belong to this sign-in (its nonce does not match)',
};

/** The ID token's problem, from what the library threw while reading the token response. */
function idTokenRefusal(error: unknown): string {
  if (error instanceof OutboundError) {
    return `Keyward could not finish signing you in: ${callFailure(error, "your identity provider's token endpoint", 'its answer')}. Try again in a moment.`;
  }
  if (error instanceof oauth.ResponseBodyError || error instanceof oauth.WWWAuthenticateChallengeError) {
    return 'Your identity provider refused to complete the sign-in (the sign-in code was not accepted). Start again.';
  }
  if (error instanceof oauth.OperationProcessingError) {
    const claim = (error.cause as { claim?: unknown } | undefined)?.claim;
    if (error.code === oauth.JWT_CLAIM_COMPARISON && typeof claim === 'string' && CLAIM_REFUSALS[claim]) {
      return `The ID token from your identity provider was refused: ${CLAIM_REFUSALS[claim]}. Nobody was signed in.`;
    }
    if (error.code === oauth.JWT_TIMESTAMP_CHECK) return 'The ID token from your identity provider was refused: it has expired. Nobody was signed in.';
  }
  return 'The answer of your identity provider was not a valid ID token, so nobody was signed in.';
}

/**
 * The callback's work: the redirect's parameters (its `state` must be the one this browser's sign-in
 * holds; an `error` there signs nobody in), the code exchanged for tokens, the ID token checked (its
 * `iss`, `aud`, `exp` and `nonce`, then its signature against the issuer's JWKS), and its `email`, which
 * must come with `email_verified: true`. Throws an SsoCallbackError with the sentence to show.
 */
export async function verifiedIdentity(
  ctx: ServiceContext,
  provider: DiscoveredProvider,
  input: { clientId: string; clientSecret: string; redirectUri: string; query: URLSearchParams; secrets: AuthorizationSecrets },
): Promise<VerifiedIdentity> {
  const { as } = provider;
  // The library judges `exp` by this Keyward's clock (tests move it), not the process's.
  const client: oauth.Client = { client_id: input.clientId, [oauth.clockSkew]: Math.floor(ctx.clock.now().getTime() / 1000) - Math.floor(Date.now() / 1000) };
  let parameters: URLSearchParams;
  try {
    parameters = oauth.validateAuthResponse(as, client, input.query, input.secrets.state);
  } catch (error) {
    if (error instanceof oauth.AuthorizationResponseError) {
      throw new SsoCallbackError('Your identity provider did not sign you in (it answered with an error, or the sign-in was cancelled).');
    }
    throw new SsoCallbackError('The answer from your identity provider does not match the sign-in this browser started. Start again from “Sign in with SSO”.');
  }
  const auth = provider.tokenAuth === 'client_secret_basic' ? oauth.ClientSecretBasic(input.clientSecret) : oauth.ClientSecretPost(input.clientSecret);
  let response: Response;
  let tokens: oauth.TokenEndpointResponse;
  try {
    response = await oauth.authorizationCodeGrantRequest(as, client, auth, parameters, input.redirectUri, input.secrets.verifier, requestOptions(ctx));
    tokens = await oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: input.secrets.nonce, requireIdToken: true });
  } catch (error) {
    throw new SsoCallbackError(idTokenRefusal(error));
  }
  try {
    await oauth.validateApplicationLevelSignature(as, response, requestOptions(ctx));
  } catch (error) {
    if (error instanceof OutboundError) {
      const failure = callFailure(error, "your identity provider's JWKS endpoint (jwks_uri)", 'its JWKS');
      throw new SsoCallbackError(`Keyward could not check the ID token's signature: ${failure}. Nobody was signed in.`);
    }
    throw new SsoCallbackError(
      "The ID token from your identity provider was refused: its signature does not verify with the provider's published keys. Nobody was signed in.",
    );
  }
  const claims = oauth.getValidatedIdTokenClaims(tokens)!;
  const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : '';
  if (!email)
    throw new SsoCallbackError('Your identity provider did not give your email address (the ID token has no email claim), so Keyward cannot tell who you are.');
  if (claims.email_verified !== true) {
    throw new SsoCallbackError(`Your identity provider does not say that ${email} is verified (email_verified is not true), so Keyward cannot trust it.`);
  }
  return { subject: claims.sub, email };
}
