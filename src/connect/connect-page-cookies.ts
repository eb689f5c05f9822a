/**
 * The Connect page's two cookies (CONTRACT 10).
 *
 * keyward_connect: this browser's random nonce (HttpOnly, SameSite=Lax, path /). The page's forms
 * carry a MAC of it (CSRF, as the hosted form's), and a flow started from the page keeps its digest:
 * the OAuth callback, reached by the provider's top-level redirect (which Lax lets the cookie ride
 * along), refuses a browser without it (RFC 6749 §10.12).
 *
 * keyward_back_{sessionId}: the page's token, held by the browser that started a flow (path /oauth,
 * for as long as the flow lives), so the callback can send it back to the page it came from. Keyward
 * itself keeps only the token's digest; this is the browser's own copy, as its address bar has.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PAGE_FLOW_SECONDS } from '../services/connect-sessions/connect-page-actions.js';
import { connectPagePath, isSessionToken } from '../services/connect-sessions/connect-sessions.js';
import type { ServiceContext } from '../services/context.js';
import { cookie, readCookie } from '../web/cookies.js';
import { nonceCookie } from '../web/nonce-cookie.js';

export const BROWSER_COOKIE = 'keyward_connect';

const backCookieName = (sessionId: string) => `keyward_back_${sessionId}`;

/** This browser's nonce, set as its cookie on its first visit. */
export function browserNonce(request: FastifyRequest, reply: FastifyReply, secure: boolean): string {
  return nonceCookie(request, reply, { name: BROWSER_COOKIE, path: '/', secure, sameSite: 'Lax' });
}

/** The nonce the browser sent, if any (the OAuth callback's check). */
export function sentBrowserNonce(request: FastifyRequest): string | undefined {
  return readCookie(request.headers.cookie, BROWSER_COOKIE);
}

export function setBackCookie(reply: FastifyReply, sessionId: string, token: string, secure: boolean) {
  reply.header('set-cookie', cookie(backCookieName(sessionId), token, { path: '/oauth', sameSite: 'Lax', secure, maxAge: PAGE_FLOW_SECONDS }));
}

/** The page's token the browser holds for `sessionId`, if any. */
export function sentBackToken(request: FastifyRequest, sessionId: string): string | undefined {
  return readCookie(request.headers.cookie, backCookieName(sessionId));
}

/**
 * Where the callback of a flow started from a Connect page sends the browser: back to that page (which
 * reads the flow's outcome), when the browser holds the page's token; null where it does not (then the
 * callback's own page says what happened).
 */
export async function connectPageOf(ctx: ServiceContext, request: FastifyRequest, flow: { id: string; connectSessionId: string }): Promise<string | null> {
  const token = sentBackToken(request, flow.connectSessionId);
  if (!token || !(await isSessionToken(ctx, flow.connectSessionId, token))) return null;
  return `${connectPagePath(token)}?flow=${flow.id}`;
}
