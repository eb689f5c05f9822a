/**
 * How every dashboard page leaves: its headers (never cached, never framed, no inline code) and the
 * fixed notices a redirect may ask for. The pages themselves are rendered in the *-views.ts files.
 */
import type { FastifyReply } from 'fastify';
import { own } from '../web/form-fields.js';

export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; " + "frame-ancestors 'none'; base-uri 'none'";

/**
 * The fixed text a request-chosen code (`?notice=`) names, or null. Only the table's own keys count:
 * a plain lookup would find `constructor` or `toString` on every object and print a function.
 */
export function fixedText(table: Record<string, string>, code: unknown): string | null {
  return typeof code === 'string' ? (own(table, code) ?? null) : null;
}

/** The headers of every dashboard page: never cached, never framed, no inline code. */
export function sendPage(reply: FastifyReply, page: string, status = 200) {
  return reply
    .code(status)
    .headers({
      'cache-control': 'no-store',
      'referrer-policy': 'same-origin',
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
      'content-security-policy': DASHBOARD_CSP,
    })
    .type('text/html; charset=utf-8')
    .send(page);
}
