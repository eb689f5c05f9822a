/**
 * Key formats of CONTRACT 1: a prefix, 64 hex of 32 CSPRNG bytes, then 8 hex of the CRC-32 (IEEE) of
 * those 64 characters. Pure functions, no I/O: the guard runs them before touching the database.
 */
import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { sha256Hex } from '../../primitives/digest.js';

export type KeyKind = 'account' | 'server';

export const KEY_PREFIX: Record<KeyKind, string> = {
  account: 'service_acct_',
  server: 'service_srv_',
};

const KEY_SHAPE: Record<KeyKind, RegExp> = {
  account: /^service_acct_[0-9a-f]{72}$/,
  server: /^service_srv_[0-9a-f]{72}$/,
};

function checksum(body: string): string {
  return crc32(body).toString(16).padStart(8, '0');
}

export function generateKey(kind: KeyKind): string {
  const body = randomBytes(32).toString('hex');
  return KEY_PREFIX[kind] + body + checksum(body);
}

/** True when the value has the key's prefix and shape, whatever its checksum (used to spot swapped headers). */
export function hasKeyShape(kind: KeyKind, value: string): boolean {
  return KEY_SHAPE[kind].test(value);
}

/** True when the value is a well-formed key of that kind: shape and checksum. */
export function isWellFormedKey(kind: KeyKind, value: string): boolean {
  if (!KEY_SHAPE[kind].test(value)) return false;
  const hex = value.slice(KEY_PREFIX[kind].length);
  return checksum(hex.slice(0, 64)) === hex.slice(64);
}

/** What is stored instead of the key: its SHA-256, hex. The key has 256 random bits, so no salt or stretching is needed. */
export function keyDigest(key: string): string {
  return sha256Hex(key);
}

const KEY_MENTION = /service_(acct|srv)_\w*/g;

/** A whole key of either kind somewhere in a text (not only its prefix: `service_acct_` alone is no key). */
const WHOLE_KEY = /service_(?:acct|srv)_[0-9a-f]{72}/;

/** Whether `text` holds a whole key, however its characters are percent-encoded (each escape decoded alone). */
export function holdsKey(text: string): boolean {
  if (!text.includes('%')) return text.includes('service_') && WHOLE_KEY.test(text);
  return WHOLE_KEY.test(text.replace(/%([0-9a-f]{2})/gi, (_escape, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))));
}

/** Whether client text holds something that starts like a key (a key pasted where it does not belong). */
export function mentionsKey(text: string): boolean {
  return text.includes(KEY_PREFIX.account) || text.includes(KEY_PREFIX.server);
}

/** Client text safe to echo: anything that starts like a key is replaced, so a pasted key never comes back. */
export function redactKeys(text: string): string {
  return text.replace(KEY_MENTION, '[redacted]');
}

/** What may be shown after creation: the prefix, an ellipsis and the last four characters. */
export function keyHint(key: string): string {
  const kind: KeyKind = key.startsWith(KEY_PREFIX.account) ? 'account' : 'server';
  return `${KEY_PREFIX[kind]}…${key.slice(-4)}`;
}
