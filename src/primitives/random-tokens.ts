import { randomBytes } from 'node:crypto';

/**
 * The random tokens Keyward hands out and later recognises: dashboard session cookies, hosted-form
 * URLs, the pages' nonce cookie. 32 random bytes, 43 characters of base64url. (OAuth states come
 * from the OAuth library and have the same shape, so isToken screens them too.)
 */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Whether the text has a token's shape: what a caller sends back is checked before it is digested or looked up. */
export function isToken(text: string | undefined): text is string {
  return text !== undefined && TOKEN.test(text);
}
