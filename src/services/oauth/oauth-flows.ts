/**
 * OAuth flows (CONTRACT 2.3): start makes a single-use state and a PKCE verifier, kept server-side
 * (the state as a digest, the verifier sealed); the callback claims the flow once, swaps the code, and
 * stores the tokens. A flow moves pending → exchanging → completed | failed, or pending → cancelled.
 */
import { addSeconds, iso } from '../../primitives/clock.js';
import { sameText, sha256Hex } from '../../primitives/digest.js';
import { newId } from '../../primitives/ids.js';
import { isToken } from '../../primitives/random-tokens.js';
import { EXPIRED_ERROR } from '../../store/expiry-notices-repository.js';
import type { ServiceContext } from '../context.js';
import { openCredentialSecret, storeCredential } from '../credentials/credentials.js';
import { DomainError } from '../domain-error.js';
import { requireAllowedRedirect, requireEnabledProvider } from '../providers/static-forms.js';
import { recordEvent } from '../webhooks/webhook-events.js';
import { oauthClientSettings } from './client-settings.js';
import { authorizationUrl, callbackParameters, exchangeCode, newAuthorizationSecrets, ProviderCallError, type TokenSet } from './oauth-client.js';
import { revokeAtProvider } from './provider-revocation.js';

export interface FlowCreated {
  id: string;
  provider: string;
  externalUserId: string;
  status: 'pending';
  authorizationUrl: string;
  expiresAt: string;
  createdAt: string;
}

export function callbackUrl(ctx: ServiceContext): string {
  return `${ctx.publicUrl}/oauth/callback`;
}

export function verifierAad(flowId: string, serverId: string): string {
  return `oauth_flows|${flowId}|${serverId}`;
}

/**
 * A flow started from a Connect page (CONTRACT 10): its session, the digest of the starting browser's
 * nonce cookie (the callback refuses any other browser), and whether the page ran in connect.js's popup.
 */
export interface ConnectPageStart {
  sessionId: string;
  browserBinding: string;
  popup: boolean;
}

export async function startFlow(
  ctx: ServiceContext,
  input: {
    serverId: string;
    slug: string;
    externalUserId: string;
    redirectUri?: string;
    scopes?: string[];
    expiresIn: number;
    connectPage?: ConnectPageStart;
  },
): Promise<FlowCreated> {
  const found = await requireEnabledProvider(ctx, input.serverId, input.slug, 'oauth2');
  await requireAllowedRedirect(ctx, input.serverId, input.redirectUri);
  if (found.provider.kind !== 'oauth2' || !found.clientId) {
    throw new DomainError('provider_not_enabled', {
      detail: `${found.provider.name} has no OAuth client on this server. Set its client id and secret (Servers → Providers).`,
    });
  }
  const scopes = input.scopes ?? found.scopes ?? found.provider.defaultScopes;
  const { state, verifier, challenge } = await newAuthorizationSecrets();
  const nowDate = ctx.clock.now();
  const id = newId('oflow');
  const createdAt = iso(nowDate);
  const expiresAt = iso(addSeconds(nowDate, input.expiresIn));
  await ctx.store.flows.addFlow({
    id,
    server_id: input.serverId,
    external_user_id: input.externalUserId,
    provider: input.slug,
    state_digest: sha256Hex(state),
    verifier: ctx.vault.seal(verifier, verifierAad(id, input.serverId)),
    redirect_uri: input.redirectUri ?? null,
    scopes: JSON.stringify(scopes),
    status: 'pending',
    error_code: null,
    expires_at: expiresAt,
    created_at: createdAt,
    completed_at: null,
    credential_id: null,
    connect_session_id: input.connectPage?.sessionId ?? null,
    browser_binding: input.connectPage?.browserBinding ?? null,
    connect_popup: input.connectPage ? (input.connectPage.popup ? 1 : 0) : null,
  });
  return {
    id,
    provider: input.slug,
    externalUserId: input.externalUserId,
    status: 'pending',
    authorizationUrl: authorizationUrl(
      { provider: found.provider, clientId: found.clientId },
      { redirectUri: callbackUrl(ctx), scopes, state, codeChallenge: challenge },
    ),
    expiresAt,
    createdAt,
  };
}

interface ClaimedFlow {
  id: string;
  serverId: string;
  accountId: string;
  externalUserId: string;
  provider: string;
  redirectUri: string | null;
  /** The scopes asked for: RFC 6749 §5.1 says an answer without `scope` granted exactly these. */
  scopes: string[];
  verifier: string;
  /** The connect session whose page started the flow (CONTRACT 10); null for a flow of the API. */
  connectSessionId: string | null;
}

/** What the callback ends in; the page or redirect follows from it (connect/oauth-callback.ts). */
export type CallbackOutcome =
  | { kind: 'unknown' }
  | { kind: 'malformed' }
  | { kind: 'gone' }
  | { kind: 'expired' }
  /** A flow bound to another browser (started from a Connect page): refused, and left as it was. */
  | { kind: 'unbound' }
  | { kind: 'failed'; flow: ClaimedFlow; providerName: string; error: string; cause: 'provider' | 'exchange' }
  | { kind: 'completed'; flow: ClaimedFlow; providerName: string };

/** Error codes a failed flow ends with, besides the provider's own RFC 6749 `error` (access_denied, …). */
export const FLOW_ERRORS = {
  expired: 'flow_expired',
  rejected: 'token_exchange_failed',
  unavailable: 'provider_unavailable',
  notEnabled: 'provider_not_enabled',
} as const;

/** The guarded UPDATE that makes the callback single-use: of two requests with one state, one claims. */
async function claimFlow(
  ctx: ServiceContext,
  state: string,
  browserNonce: string | undefined,
): Promise<ClaimedFlow | Exclude<CallbackOutcome, { kind: 'failed' | 'completed' }>> {
  if (!isToken(state)) return { kind: 'unknown' };
  const flow = await ctx.store.flows.flowByState(sha256Hex(state));
  if (!flow) return { kind: 'unknown' };
  // Before anything can change: a consent forwarded to another browser neither ends nor completes the flow.
  if (flow.browser_binding !== null && !(isToken(browserNonce) && sameText(sha256Hex(browserNonce), flow.browser_binding))) {
    return { kind: 'unbound' };
  }
  // Ended by its expiry notice (services/expiry-notices/): answered as an expired flow, as before the notice.
  if (flow.status === 'failed' && flow.error_code === EXPIRED_ERROR) return { kind: 'expired' };
  if (flow.status !== 'pending') return { kind: 'gone' };
  const now = iso(ctx.clock.now());
  if (flow.expires_at <= now) {
    await endFlowFailed(
      ctx,
      { id: flow.id, serverId: flow.server_id, externalUserId: flow.external_user_id, provider: flow.provider },
      'pending',
      FLOW_ERRORS.expired,
    );
    return { kind: 'expired' };
  }
  if (!(await ctx.store.flows.claimFlow(flow.id, now))) return { kind: 'gone' };
  return {
    id: flow.id,
    serverId: flow.server_id,
    accountId: flow.account_id,
    externalUserId: flow.external_user_id,
    provider: flow.provider,
    redirectUri: flow.redirect_uri,
    scopes: JSON.parse(flow.scopes) as string[],
    verifier: ctx.vault.open(flow.verifier, verifierAad(flow.id, flow.server_id)),
    connectSessionId: flow.connect_session_id,
  };
}

/** Ends a flow still in `from` as failed, with its `connect.failed` event in the same transaction. */
async function endFlowFailed(
  ctx: ServiceContext,
  flow: Pick<ClaimedFlow, 'id' | 'serverId' | 'externalUserId' | 'provider'>,
  from: 'pending' | 'exchanging',
  error: string,
): Promise<void> {
  const now = iso(ctx.clock.now());
  await ctx.store.transaction(async () => {
    if (!(await ctx.store.flows.endFlow(flow.id, from, error, now))) return;
    await recordEvent(ctx, {
      type: 'connect.failed',
      serverId: flow.serverId,
      at: now,
      data: { externalUserId: flow.externalUserId, provider: flow.provider, flowId: flow.id, error },
    });
  });
}

/** The provider's own error code, where it is a plain RFC 6749-style word; anything else is summarised. */
function providerErrorCode(error: string | null): string {
  return error && /^[a-z0-9_]{1,64}$/.test(error) ? error : 'authorization_failed';
}

/** Stores the tokens and completes the flow in one transaction; false when the flow was cancelled meanwhile. */
async function completeFlow(ctx: ServiceContext, flow: ClaimedFlow, tokens: TokenSet) {
  const now = iso(ctx.clock.now());
  return ctx.store.transaction(async () => {
    if (!(await ctx.store.flows.completeFlow(flow.id, now))) return null;
    const stored = await storeCredential(ctx, {
      accountId: flow.accountId,
      serverId: flow.serverId,
      externalUserId: flow.externalUserId,
      provider: flow.provider,
      secret: { type: 'oauth2', accessToken: tokens.accessToken, refreshToken: tokens.refreshToken, tokenType: tokens.tokenType },
      accessExpiresAt: tokens.expiresAt,
      scopes: tokens.scopes ?? flow.scopes,
      actor: `end_user:${flow.id}`,
      now,
      origin: { flowId: flow.id },
    });
    await ctx.store.flows.linkFlowCredential(flow.id, stored.credentialId);
    if (flow.connectSessionId) await ctx.store.connectSessions.markConnected(flow.connectSessionId, now);
    return stored;
  });
}

/**
 * A redirect no authorization server following RFC 6749 4.1.2 sends: a parameter twice, an empty
 * `code`, neither `code` nor `error`, or tokens in the front channel (`id_token`, `access_token`:
 * Keyward asks for `response_type=code` only). Nobody was called and nothing is known about the flow
 * from it, and anyone can type such a URL, so it must not be able to end a flow the provider's real
 * redirect can still complete: it is a 400 page and the flow stays as it was.
 */
function isMalformedCallback(query: URLSearchParams): boolean {
  const names = [...query.keys()];
  if (new Set(names).size !== names.length) return true;
  if (query.has('id_token') || query.has('access_token')) return true;
  return !query.has('error') && !query.get('code');
}

/**
 * GET /oauth/callback. Nothing is stored unless the exchange succeeded; a failure changes only the
 * flow's status. The replaced credential, if any, is revoked at the provider once the new one is saved.
 */
export async function handleCallback(ctx: ServiceContext, query: URLSearchParams, browser: { nonce?: string } = {}): Promise<CallbackOutcome> {
  // Without a state the request names no flow at all: that stays the "unknown" answer.
  if (query.has('state') && isMalformedCallback(query)) return { kind: 'malformed' };
  const claim = await claimFlow(ctx, query.get('state') ?? '', browser.nonce);
  if ('kind' in claim) return claim;
  const flow = claim;
  const settings = await oauthClientSettings(ctx, flow.serverId, flow.provider);
  const providerName = settings?.provider.name ?? flow.provider;
  const fail = async (error: string, cause: 'provider' | 'exchange'): Promise<CallbackOutcome> => {
    await endFlowFailed(ctx, flow, 'exchanging', error);
    return { kind: 'failed', flow, providerName, error, cause };
  };
  if (!settings) return fail(FLOW_ERRORS.notEnabled, 'exchange');

  let tokens: TokenSet;
  try {
    const parameters = callbackParameters(settings, query, query.get('state')!);
    tokens = await exchangeCode(settings, { parameters, redirectUri: callbackUrl(ctx), verifier: flow.verifier, now: ctx.clock.now() });
  } catch (error) {
    if (!(error instanceof ProviderCallError)) throw error;
    // An error in the redirect itself is the provider's (or the end user's) answer; the rest is the exchange's.
    if (!query.has('code') || query.has('error')) return fail(providerErrorCode(error.error), 'provider');
    return fail(FLOW_ERRORS[error.kind], 'exchange');
  }

  const stored = await completeFlow(ctx, flow, tokens);
  if (!stored) {
    // The member was revoked while the code was being swapped: the new tokens must not outlive that.
    await revokeAtProvider(settings, { type: 'oauth2', ...tokens });
    return { kind: 'gone' };
  }
  if (stored.replaced) await stored.revocations.answered(stored.replaced.id, await revokeAtProvider(settings, openCredentialSecret(ctx, stored.replaced)));
  return { kind: 'completed', flow, providerName };
}
