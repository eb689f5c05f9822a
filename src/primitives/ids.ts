import { randomBytes } from 'node:crypto';

export type IdPrefix =
  | 'acct'
  | 'usr'
  | 'srv'
  | 'skey'
  | 'key'
  | 'mem'
  | 'cred'
  | 'oflow'
  | 'cfs'
  | 'req'
  | 'evt'
  | 'ses'
  | 'wh'
  | 'whs'
  | 'msg'
  | 'att'
  | 'inv'
  | 'rcv'
  | 'csn';

/**
 * Random bytes for ids, drawn from the system's CSPRNG a page at a time and each used once: one call
 * into it per 512 ids instead of one per id (every request and every webhook attempt makes one; the
 * call was 4–6% of the webhook thread's time, bench/RESULTS.md). Node's own randomUUID keeps such a
 * cache too.
 */
const POOL_BYTES = 4096;
const ID_RANDOM_BYTES = 8;
let pool = Buffer.alloc(0);
let taken = 0;

function randomHex(): string {
  if (taken + ID_RANDOM_BYTES > pool.length) {
    pool = randomBytes(POOL_BYTES);
    taken = 0;
  }
  const hex = pool.toString('hex', taken, taken + ID_RANDOM_BYTES);
  taken += ID_RANDOM_BYTES;
  return hex;
}

/**
 * A prefixed id: 12 hex of the creation time in milliseconds, then 16 hex of randomness, so ids made
 * later sort later (a stable tie-breaker for keyset pagination) and cannot be guessed.
 */
export function newId(prefix: IdPrefix, now = Date.now()): string {
  return `${prefix}_${now.toString(16).padStart(12, '0')}${randomHex()}`;
}
