/**
 * One-time nonces of the dashboard forms that create something (Generate Key, Create server, Rotate
 * key): each rendered form carries a fresh nonce, and the POST claims it before creating anything.
 * The primary key decides, on every node, which of two submissions of the same form (a reload, a
 * double click) acts: the other makes nothing.
 */
import { randomBytes } from 'node:crypto';
import { addSeconds, iso } from '../../primitives/clock.js';
import type { ServiceContext } from '../context.js';
import { SESSION_LIFETIME_SECONDS } from './sessions.js';

export const FORM_NONCE = /^[A-Za-z0-9_-]{24}$/;

export function newFormNonce(): string {
  return randomBytes(18).toString('base64url');
}

/**
 * Records the nonce as used; false when it was used already. A used nonce is kept as long as a
 * session lives: the form also carries its session's CSRF token, so after that it is refused anyway.
 */
export async function claimFormNonce(ctx: ServiceContext, nonce: string): Promise<boolean> {
  const now = ctx.clock.now();
  return ctx.store.sessions.claimFormNonce(nonce, iso(now), iso(addSeconds(now, SESSION_LIFETIME_SECONDS)));
}

/** Gives a claimed nonce back when its submission was refused and made nothing, so sending it again may act. */
export async function releaseFormNonce(ctx: ServiceContext, nonce: string): Promise<void> {
  await ctx.store.sessions.releaseFormNonce(nonce);
}
