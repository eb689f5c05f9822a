/**
 * The Connect page's routes (CONTRACT 10), on the scope of the /connect prefix (its form parser is the
 * hosted form's): GET /connect/s/{token} shows the page; POST …/connect/{provider} starts an OAuth
 * flow or stores a static provider's values; GET and POST …/disconnect/{provider} confirm and revoke;
 * GET …/done ends a session without a redirect URI; GET …/status answers connect.js in JSON. No keys:
 * the token opens the page, a MAC of the browser's nonce cookie guards every POST (CSRF, as the hosted
 * form's), and an OAuth flow started here is bound to that cookie (connect-page-cookies.ts).
 *
 * After a connection the browser goes to the redirect URI (`status=success&sessionId=…&provider=…`)
 * where the session has one, unless the page runs in connect.js's popup: then it stays on the page,
 * whose script tells the opener and closes the popup. A provider's page that sends
 * Cross-Origin-Opener-Policy severs the popup from its opener, so nothing it says reaches the company's
 * page any more: connect.js then reads how the popup's newest flow ended from …/status instead.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { StaticProvider } from '../catalog/provider-definition.js';
import { readBranding } from '../services/branding/branding.js';
import { connectStaticOnPage, disconnectOnPage, pageFlowOutcome, popupFlowStatus, startPageFlow } from '../services/connect-sessions/connect-page-actions.js';
import {
  type ConnectSession,
  connectPagePath,
  type OfferedProvider,
  offeredProvider,
  openConnectSession,
  readConnectPage,
} from '../services/connect-sessions/connect-sessions.js';
import type { ServiceContext } from '../services/context.js';
import { DomainError } from '../services/domain-error.js';
import { readStaticFields } from '../services/providers/static-forms.js';
import { formText } from '../web/form-fields.js';
import { nonceMatches } from '../web/nonce-cookie.js';
import { setPageHeaders } from '../web/page-headers.js';
import { appUrl } from './app-redirect.js';
import { BROWSER_COOKIE, browserNonce, setBackCookie } from './connect-page-cookies.js';
import { type ConnectPageView, connectPage, continuePage, disconnectPage, donePage, expiredPage, type PageEvent } from './connect-page-views.js';
import { messagePage, refusedCredentialsMessage } from './form-page.js';

type Params = { token: string; provider: string };
type PageRequest = FastifyRequest<{ Params: Params; Body: Record<string, unknown>; Querystring: Record<string, unknown> }>;

/** The end users' page headers, with the page's one script from 'self' and forms allowed to end at the redirect URI. */
function setConnectPageHeaders(reply: FastifyReply, session: ConnectSession) {
  setPageHeaders(reply, session.redirectUri ? new URL(session.redirectUri).origin : null);
  reply.header('content-security-policy', `${reply.getHeader('content-security-policy')}; script-src 'self'`);
}

export function registerConnectPageRoutes(scope: FastifyInstance, ctx: ServiceContext) {
  const secure = ctx.publicUrl.startsWith('https:');
  const csrfFor = (sessionId: string, nonce: string) => ctx.vault.mac(`connect-csrf|${sessionId}|${nonce}`);

  /** The open session of the request's token, or null once the 404 or 410 page (saying nothing of whose) is sent. */
  async function openSession(request: PageRequest, reply: FastifyReply): Promise<ConnectSession | null> {
    const opened = await openConnectSession(ctx, request.params.token);
    if (opened.state === 'open') {
      setConnectPageHeaders(reply, opened.session);
      return opened.session;
    }
    setPageHeaders(reply);
    if (opened.state === 'unknown') await reply.code(404).send(messagePage(404));
    else await reply.code(410).send(expiredPage());
    return null;
  }

  /** A POST's session, once its CSRF token is this browser's; null once the refusal is sent. */
  async function postedSession(request: PageRequest, reply: FastifyReply): Promise<ConnectSession | null> {
    const session = await openSession(request, reply);
    if (!session) return null;
    if (nonceMatches(request, BROWSER_COOKIE, (nonce) => csrfFor(session.id, nonce))) return session;
    await reply.code(403).send(messagePage(403));
    return null;
  }

  /** Everything the page shows, as it is now, plus what this answer adds. */
  async function pageView(request: PageRequest, reply: FastifyReply, session: ConnectSession, extra: Partial<ConnectPageView> = {}): Promise<ConnectPageView> {
    const nonce = browserNonce(request, reply, secure);
    const base = connectPagePath(request.params.token);
    return {
      branding: await readBranding(ctx, session.serverId),
      base,
      csrf: csrfFor(session.id, nonce),
      state: await readConnectPage(ctx, session),
      events: [],
      allowedOrigins: session.allowedOrigins,
      popup: false,
      doneHref: session.redirectUri ? appUrl(session.redirectUri, { status: 'done', sessionId: session.id }) : `${base}/done`,
      ...extra,
    };
  }

  async function sendPage(request: PageRequest, reply: FastifyReply, session: ConnectSession, status: number, extra: Partial<ConnectPageView> = {}) {
    return reply.code(status).send(connectPage(await pageView(request, reply, session, extra)));
  }

  /** After a connection: on to the app where it asked for that, else the page saying so (and telling connect.js). */
  function connected(
    request: PageRequest,
    reply: FastifyReply,
    session: ConnectSession,
    offer: { slug: string; name: string; credentialId: string; popup: boolean },
  ) {
    if (session.redirectUri && !offer.popup) {
      return reply
        .code(303)
        .header('location', appUrl(session.redirectUri, { status: 'success', sessionId: session.id, provider: offer.slug }))
        .send();
    }
    return sendPage(request, reply, session, 200, {
      popup: offer.popup,
      notice: { kind: 'success', text: `${offer.name} connected.` },
      events: [{ type: 'connected', provider: offer.slug, credentialId: offer.credentialId }],
    });
  }

  /** The offered provider the path names; null once the page is sent again saying it is not offered here. */
  async function offerOf(request: PageRequest, reply: FastifyReply, session: ConnectSession, popup: boolean): Promise<OfferedProvider | null> {
    const offer = offeredProvider(await readConnectPage(ctx, session), request.params.provider);
    if (offer) return offer;
    await sendPage(request, reply, session, 404, { popup, notice: { kind: 'error', text: 'That provider is not offered on this page.' } });
    return null;
  }

  /** A POST about one provider (connect, disconnect): its session past the CSRF check, whether it came from connect.js's popup, and the offer; null once refused. */
  async function postedOffer(request: PageRequest, reply: FastifyReply) {
    const session = await postedSession(request, reply);
    if (!session) return null;
    const popup = formText(request.body, 'popup') === '1';
    const offer = await offerOf(request, reply, session, popup);
    return offer ? { session, popup, offer } : null;
  }

  scope.get<{ Params: Params; Querystring: Record<string, unknown> }>('/s/:token', async (request, reply) => {
    const session = await openSession(request as PageRequest, reply);
    if (!session) return reply;
    // Back from a flow this page started (oauth-callback.ts): its outcome is read from the flow, never from the query.
    const flowId = typeof request.query.flow === 'string' ? request.query.flow : undefined;
    const flow = await pageFlowOutcome(ctx, session, flowId);
    if (flow?.status === 'completed' && flow.credentialId) {
      const name = (await readConnectPage(ctx, session)).providers.find((p) => p.provider.slug === flow.provider)?.provider.name ?? flow.provider;
      return connected(request as PageRequest, reply, session, { slug: flow.provider, name, credentialId: flow.credentialId, popup: flow.popup });
    }
    if (flow?.status === 'failed') {
      const event: PageEvent = { type: 'error', provider: flow.provider, code: flow.error ?? 'authorization_failed' };
      return sendPage(request as PageRequest, reply, session, 200, {
        popup: flow.popup,
        notice: { kind: 'error', text: `Not connected (${event.code}). You can try again.` },
        events: [event],
      });
    }
    return sendPage(request as PageRequest, reply, session, 200, { popup: flow?.popup ?? false });
  });

  scope.post<{ Params: Params; Body: Record<string, unknown> }>('/s/:token/connect/:provider', async (request, reply) => {
    const page = request as PageRequest;
    const posted = await postedOffer(page, reply);
    if (!posted) return reply;
    const { session, popup } = posted;
    const { provider } = posted.offer;
    if (provider.kind === 'static') return connectStatic(page, reply, session, provider, popup);
    try {
      const nonce = browserNonce(page, reply, secure);
      const flow = await startPageFlow(ctx, session, provider.slug, { nonce, popup });
      setBackCookie(reply, session.id, request.params.token, secure);
      return reply
        .header('refresh', `0;url=${flow.authorizationUrl}`)
        .send(continuePage(await readBranding(ctx, session.serverId), provider.name, flow.authorizationUrl));
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      // Its OAuth client was removed since the page was shown: the company's to fix, not the end user's.
      return sendPage(page, reply, session, 422, {
        popup,
        notice: { kind: 'error', text: `${provider.name} cannot be connected right now. Ask the app that sent you here.` },
      });
    }
  });

  /** A static provider's values: checked field by field, then at the provider, then stored (CONTRACT 8.3, as the hosted form). */
  async function connectStatic(request: PageRequest, reply: FastifyReply, session: ConnectSession, provider: StaticProvider, popup: boolean) {
    const { values, errors, kept } = readStaticFields(provider.fields, (name) => formText(request.body, name));
    if (Object.keys(errors).length > 0) {
      return sendPage(request, reply, session, 422, { popup, staticForm: { slug: provider.slug, values: kept, errors } });
    }
    const stored = await connectStaticOnPage(ctx, session, provider, values);
    if ('refusedWithStatus' in stored) {
      const notice = refusedCredentialsMessage(provider.name, stored.refusedWithStatus);
      return sendPage(request, reply, session, 422, { popup, staticForm: { slug: provider.slug, values: kept, errors: {}, notice } });
    }
    return connected(request, reply, session, { slug: provider.slug, name: provider.name, credentialId: stored.credentialId, popup });
  }

  scope.get<{ Params: Params; Querystring: Record<string, unknown> }>('/s/:token/disconnect/:provider', async (request, reply) => {
    const page = request as PageRequest;
    const session = await openSession(page, reply);
    if (!session) return reply;
    const popup = request.query.popup === '1';
    const offer = await offerOf(page, reply, session, popup);
    if (!offer) return reply;
    if (!offer.credential) {
      return sendPage(page, reply, session, 200, { popup, notice: { kind: 'error', text: `${offer.provider.name} is not connected.` } });
    }
    const view = await pageView(page, reply, session);
    return reply.send(disconnectPage({ ...view, popup, providerName: offer.provider.name, slug: offer.provider.slug }));
  });

  scope.post<{ Params: Params; Body: Record<string, unknown> }>('/s/:token/disconnect/:provider', async (request, reply) => {
    const page = request as PageRequest;
    const posted = await postedOffer(page, reply);
    if (!posted) return reply;
    const { session, popup } = posted;
    const { provider } = posted.offer;
    const revoked = await disconnectOnPage(ctx, session, provider.slug);
    if (!revoked) return sendPage(page, reply, session, 200, { popup, notice: { kind: 'error', text: `${provider.name} is not connected.` } });
    return sendPage(page, reply, session, 200, {
      popup,
      notice: { kind: 'success', text: `${provider.name} disconnected.` },
      events: [{ type: 'disconnected', provider: provider.slug, credentialId: revoked.credentialId }],
    });
  });

  scope.get<{ Params: Params }>('/s/:token/done', async (request, reply) => {
    const session = await openSession(request as PageRequest, reply);
    if (!session) return reply;
    return reply.send(donePage(await readBranding(ctx, session.serverId)));
  });

  /**
   * The newest flow the page started in connect.js's popup, for connect.js (assets/connect.js) once the
   * popup is severed from it. JSON under the page's own headers (no-store); readable across origins by
   * an origin the session allows only (no credentials: the token is the whole of what opens it), so a
   * page on any other origin learns nothing, as it gets none of the page's messages.
   */
  scope.get<{ Params: Params }>('/s/:token/status', async (request, reply) => {
    const session = await openSession(request as PageRequest, reply);
    if (!session) return reply;
    const origin = request.headers.origin;
    reply.header('vary', 'Origin');
    if (origin && session.allowedOrigins.includes(origin)) reply.header('access-control-allow-origin', origin);
    return reply.type('application/json; charset=utf-8').send(await popupFlowStatus(ctx, session));
  });
}
