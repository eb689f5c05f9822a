/**
 * The headers of an end user's page (the hosted form, the OAuth callback, their error pages): never
 * cached, never framed, no script at all. Also written as they are on a socket Node could not parse a
 * request from, where no reply object exists.
 */
import type { FastifyReply } from 'fastify';

const csp = (formAction: string | null) =>
  `default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'${formAction ? ` ${formAction}` : ''}; frame-ancestors 'none'; base-uri 'none'`;

export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'content-security-policy': csp(null),
};

/** Headers every end user's page carries; `formAction` widens form-action to the redirect's origin. */
export function setPageHeaders(reply: FastifyReply, formAction: string | null = null) {
  reply.headers({ ...PAGE_HEADERS, 'content-security-policy': csp(formAction) });
  reply.type('text/html; charset=utf-8');
}
