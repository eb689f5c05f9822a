/**
 * What the end user does on a Connect page (CONTRACT 10): start an OAuth flow bound to their browser,
 * store a static provider's values (checked first as the hosted form checks them, CONTRACT 8.3), and
 * disconnect a provider (the revocation of 2.7, audited, sent as credential.revoked). Each acts for
 * the session's member only, and records the session's first connection.
 */
import type { StaticProvider } from '../../catalog/provider-definition.js';
import { iso } from '../../primitives/clock.js';
import { sha256Hex } from '../../primitives/digest.js';
import { EXPIRED_ERROR } from '../../store/expiry-notices-repository.js';
import { revokeMember } from '../audience/members.js';
import type { ServiceContext } from '../context.js';
import { storeCredential } from '../credentials/credentials.js';
import { DomainError } from '../domain-error.js';
import { checkValues } from '../gateway/verify-request.js';
import { startFlow } from '../oauth/oauth-flows.js';
import type { ConnectSession } from './connect-sessions.js';

/** How long a flow started from the page stays open, as POST /v1/oauth/{provider}/start's default. */
export const PAGE_FLOW_SECONDS = 600;

/** The actor of what an end user does on a session's page, as the audit trail names it. */
const pageActor = (session: ConnectSession) => `end_user:${session.id}`;

/**
 * Starts an OAuth flow for the session's member, bound to the browser whose nonce cookie is `browserNonce`.
 * The flow ends no later than its session: one finishing after the session's expiry notice went out
 * would connect through a session already reported as one nobody finished.
 */
export async function startPageFlow(ctx: ServiceContext, session: ConnectSession, slug: string, browser: { nonce: string; popup: boolean }) {
  const sessionLeft = Math.floor((Date.parse(session.expiresAt) - ctx.clock.now().getTime()) / 1000);
  return startFlow(ctx, {
    serverId: session.serverId,
    slug,
    externalUserId: session.externalUserId,
    expiresIn: Math.max(1, Math.min(PAGE_FLOW_SECONDS, sessionLeft)),
    connectPage: { sessionId: session.id, browserBinding: sha256Hex(browser.nonce), popup: browser.popup },
  });
}

/**
 * Checks the values at the provider where it has a verify request, then stores them (replacing the
 * member's older credential of the provider, with its events) and notes the session's first
 * connection, in one transaction. Values the provider refuses (401, 403) store nothing.
 */
export async function connectStaticOnPage(
  ctx: ServiceContext,
  session: ConnectSession,
  provider: StaticProvider,
  values: Record<string, string>,
): Promise<{ credentialId: string } | { refusedWithStatus: number }> {
  const check = await checkValues(ctx, provider, values);
  if (check?.outcome === 'rejected') return { refusedWithStatus: check.status ?? 401 };
  const now = iso(ctx.clock.now());
  return ctx.store.transaction(async () => {
    const { credentialId } = await storeCredential(ctx, {
      accountId: session.accountId,
      serverId: session.serverId,
      externalUserId: session.externalUserId,
      provider: provider.slug,
      secret: { type: 'static', values },
      actor: pageActor(session),
      now,
      origin: { sessionId: session.id },
      lastCheck: check ? { at: check.at, outcome: check.outcome === 'valid' ? 'valid' : 'unreachable' } : undefined,
    });
    await ctx.store.connectSessions.markConnected(session.id, now);
    return { credentialId };
  });
}

/** Revokes the member's credential of `slug` as DELETE /v1/end-users/{id}?provider= does; null where there was none. */
export async function disconnectOnPage(ctx: ServiceContext, session: ConnectSession, slug: string): Promise<{ credentialId: string } | null> {
  try {
    const { revoked } = await revokeMember(ctx, {
      accountId: session.accountId,
      serverId: session.serverId,
      externalUserId: session.externalUserId,
      provider: slug,
      actor: pageActor(session),
    });
    return revoked[0] ? { credentialId: revoked[0].id } : null;
  } catch (error) {
    // Disconnected already (another tab, the API): the page just says so.
    if (error instanceof DomainError && (error.code === 'credential_not_found' || error.code === 'end_user_not_found')) return null;
    throw error;
  }
}

/** A flow the session's page started, as the page tells its outcome; null for any other flow id. */
export interface PageFlowOutcome {
  provider: string;
  status: 'pending' | 'exchanging' | 'completed' | 'failed' | 'cancelled';
  error: string | null;
  credentialId: string | null;
  popup: boolean;
}

const FLOW_ID = /^oflow_[0-9a-f]{28}$/;

export async function pageFlowOutcome(ctx: ServiceContext, session: ConnectSession, flowId: string | undefined): Promise<PageFlowOutcome | null> {
  if (!flowId || !FLOW_ID.test(flowId)) return null;
  const flow = await ctx.store.connectSessions.flowOfSession(flowId, session.id);
  if (!flow) return null;
  return { provider: flow.provider, status: flow.status, error: flow.error_code, credentialId: flow.credential_id, popup: flow.connect_popup === 1 };
}

/**
 * What the session's status answer tells connect.js (connect-page-routes.ts): the newest flow the page
 * started in its popup, for a company's page that can no longer hear from that popup (a provider's
 * page sent Cross-Origin-Opener-Policy). Only what the page itself shows its token's holder when the
 * flow comes back: the provider, the credential connected, the error code.
 */
export type PopupFlowStatus =
  | { status: 'none' }
  | { status: 'pending' | 'expired' | 'cancelled'; provider: string }
  | { status: 'connected'; provider: string; credentialId: string }
  | { status: 'failed'; provider: string; code: string };

export async function popupFlowStatus(ctx: ServiceContext, session: ConnectSession): Promise<PopupFlowStatus> {
  const flow = await ctx.store.connectSessions.newestPopupFlow(session.id);
  if (!flow) return { status: 'none' };
  const { provider } = flow;
  switch (flow.status) {
    case 'pending':
      // Past its expiry its callback is refused, whether or not the expiry notice has marked it yet.
      return { status: flow.expires_at <= iso(ctx.clock.now()) ? 'expired' : 'pending', provider };
    case 'exchanging':
      return { status: 'pending', provider };
    case 'completed':
      return flow.credential_id ? { status: 'connected', provider, credentialId: flow.credential_id } : { status: 'pending', provider };
    case 'failed':
      return flow.error_code === EXPIRED_ERROR
        ? { status: 'expired', provider }
        : { status: 'failed', provider, code: flow.error_code ?? 'authorization_failed' };
    case 'cancelled':
      return { status: 'cancelled', provider };
  }
}
