/**
 * The pages' nonce cookie (behind an anonymous form's CSRF token), made of the same random tokens the
 * services hand out (src/primitives/random-tokens.ts), and the check of a posted form's token against it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sameText } from '../primitives/digest.js';
import { isToken, newToken } from '../primitives/random-tokens.js';
import { cookie, readCookie } from './cookies.js';
import { formText } from './form-fields.js';

/**
 * This browser's nonce from cookie `name`, or, on its first visit (or with a cookie not made here), a
 * new one set as an HttpOnly cookie on `path`, SameSite=Strict unless told (the Connect page's must
 * come back with a provider's redirect to the OAuth callback: Lax).
 */
export function nonceCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  cookieOf: { name: string; path: string; secure: boolean; sameSite?: 'Strict' | 'Lax' },
): string {
  const given = readCookie(request.headers.cookie, cookieOf.name);
  if (isToken(given)) return given;
  const nonce = newToken();
  reply.header('set-cookie', cookie(cookieOf.name, nonce, { path: cookieOf.path, sameSite: cookieOf.sameSite ?? 'Strict', secure: cookieOf.secure }));
  return nonce;
}

/**
 * True when the posted form's `csrf` field is `macOf` the nonce in cookie `cookieName`; false without
 * that cookie (a cross-site POST has neither).
 */
export function nonceMatches(request: FastifyRequest, cookieName: string, macOf: (nonce: string) => string): boolean {
  const nonce = readCookie(request.headers.cookie, cookieName);
  return !!nonce && sameText(formText(request.body, 'csrf'), macOf(nonce));
}
