import { createHash } from 'node:crypto';

/**
 * The digest stored in place of a secret that only has to be recognised again: keys, form tokens,
 * OAuth states, session tokens. These are 256-bit random values, so a plain SHA-256 is enough.
 */
export function sha256Hex(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
