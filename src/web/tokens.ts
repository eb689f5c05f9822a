/**
 * Random tokens the pages hand to a browser (the nonce cookie behind an anonymous form's CSRF token):
 * 32 random bytes, 43 characters of base64url. Services make their own tokens; this is the pages' side.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { cookie, readCookie } from './cookies.js';

const TOKEN = /^[A-Za-z0-9_-]{43}$/;

export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Whether the text has a token's shape (what a browser sends back is checked before it is used). */
export function isToken(text: string | undefined): text is string {
  return text !== undefined && TOKEN.test(text);
}

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
