/**
 * What the end user does on a Connect page (CONTRACT 10): start an OAuth flow bound to their browser,
 * store a static provider's values (checked first as the hosted form checks them, CONTRACT 8.3), and
 * disconnect a provider (the revocation of 2.7, audited, sent as credential.revoked). Each acts for
 * the session's member only, and records the session's first connection.
 */
import type { StaticProvider } from '../../catalog/provider-definition.js';
import { addSeconds, iso } from '../../primitives/clock.js';
import { sha256Hex } from '../../primitives/digest.js';
import { EXPIRED_ERROR } from '../../store/expiry-notices-repository.js';
import { revokeMember } from '../audience/member-revocation.js';
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
  | (FlowMark & ({ status: 'pending' | 'expired' | 'cancelled' } | { status: 'connected'; credentialId: string } | { status: 'failed'; code: string }));

/**
 * Which flow an answer is about: its provider, and an opaque mark of the flow (a digest of its id), by
 * which connect.js tells a flow of its own popup from one an earlier popup of the same session left
 * (the link serves any number of connections).
 */
type FlowMark = { provider: string; flow: string };

const flowMark = (flowId: string) => sha256Hex(`connect-popup-flow|${flowId}`).slice(0, 22);

/**
 * How long past its expiry a flow may stay in its exchange before it is told as expired: a node that
 * died mid-exchange leaves it there, and connect.js would otherwise read it as pending until the
 * session ends. An exchange that is alive ends within its outbound timeouts, far inside this.
 */
const EXCHANGE_GRACE_SECONDS = 120;

export async function popupFlowStatus(ctx: ServiceContext, session: ConnectSession): Promise<PopupFlowStatus> {
  const flow = await ctx.store.connectSessions.newestPopupFlow(session.id);
  if (!flow) return { status: 'none' };
  const mark: FlowMark = { provider: flow.provider, flow: flowMark(flow.id) };
  const now = ctx.clock.now();
  switch (flow.status) {
    case 'pending':
      // Past its expiry its callback is refused, whether or not the expiry notice has marked it yet.
      return { status: flow.expires_at <= iso(now) ? 'expired' : 'pending', ...mark };
    case 'exchanging':
      return { status: flow.expires_at <= iso(addSeconds(now, -EXCHANGE_GRACE_SECONDS)) ? 'expired' : 'pending', ...mark };
    case 'completed':
      return flow.credential_id ? { status: 'connected', ...mark, credentialId: flow.credential_id } : { status: 'pending', ...mark };
    case 'failed':
      return flow.error_code === EXPIRED_ERROR
        ? { status: 'expired', ...mark }
        : { status: 'failed', ...mark, code: flow.error_code ?? 'authorization_failed' };
    case 'cancelled':
      return { status: 'cancelled', ...mark };
  }
}
