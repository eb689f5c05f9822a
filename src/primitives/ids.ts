import { randomBytes } from 'node:crypto';

export type IdPrefix = 'acct' | 'usr' | 'srv' | 'skey' | 'key' | 'mem' | 'cred' | 'oflow' | 'cfs' | 'req' | 'evt' | 'ses' | 'wh' | 'whs' | 'msg' | 'att';

/**
 * A prefixed id: 12 hex of the creation time in milliseconds, then 16 hex of randomness, so ids made
 * later sort later (a stable tie-breaker for keyset pagination) and cannot be guessed.
 */
export function newId(prefix: IdPrefix, now = Date.now()): string {
  return `${prefix}_${now.toString(16).padStart(12, '0')}${randomBytes(8).toString('hex')}`;
}
