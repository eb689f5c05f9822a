import { hash, timingSafeEqual } from 'node:crypto';

/**
 * The digest stored in place of a secret that only has to be recognised again: keys, form tokens,
 * OAuth states, session tokens. These are 256-bit random values, so a plain SHA-256 is enough.
 */
export function sha256Hex(secret: string): string {
  // The one-shot form: half the cost of a Hash object, and this runs twice on every management request.
  return hash('sha256', secret, 'hex');
}

/**
 * Compares two strings in time that does not depend on where they differ: a `!==` that stops at the
 * first wrong character would let a caller forge a MAC (a CSRF token, a cursor) one character at a time.
 */
export function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
