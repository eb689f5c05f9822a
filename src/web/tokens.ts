/**
 * The pages' nonce cookie (behind an anonymous form's CSRF token), made of the same random tokens the
 * services hand out (src/tokens.ts).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isToken, newToken } from '../tokens.js';
import { cookie, readCookie } from './cookies.js';

/**
 * This browser's nonce from cookie `name`, or, on its first visit (or with a cookie not made here), a
 * new one set as an HttpOnly, SameSite=Strict cookie on `path`.
 */
export function nonceCookie(request: FastifyRequest, reply: FastifyReply, cookieOf: { name: string; path: string; secure: boolean }): string {
  const given = readCookie(request.headers.cookie, cookieOf.name);
  if (isToken(given)) return given;
  const nonce = newToken();
  reply.header('set-cookie', cookie(cookieOf.name, nonce, { path: cookieOf.path, sameSite: 'Strict', secure: cookieOf.secure }));
  return nonce;
}
