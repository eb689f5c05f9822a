import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { generateKey, hasKeyShape, isWellFormedKey, keyDigest, keyHint } from '../../src/services/keys/key-format.js';

describe('key formats (CONTRACT 1)', () => {
  it('makes keys of the exact shape, with a CRC-32 of the 64 hex as the last 8', () => {
    for (const kind of ['account', 'server'] as const) {
      const key = generateKey(kind);
      const prefix = kind === 'account' ? 'service_acct_' : 'service_srv_';
      expect(key).toMatch(kind === 'account' ? /^service_acct_[0-9a-f]{72}$/ : /^service_srv_[0-9a-f]{72}$/);
      const body = key.slice(prefix.length, prefix.length + 64);
      expect(key.slice(-8)).toBe(crc32(body).toString(16).padStart(8, '0'));
      expect(isWellFormedKey(kind, key)).toBe(true);
    }
  });

  it('checks a known CRC-32 (IEEE) value', () => {
    const body = 'a'.repeat(64);
    // CRC-32/ISO-HDLC of 64 × "a", computed independently of node:zlib.
    let crc = 0xffffffff;
    for (const byte of Buffer.from(body)) {
      crc ^= byte;
      for (let i = 0; i < 8; i++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
    }
    const expected = ((crc ^ 0xffffffff) >>> 0).toString(16).padStart(8, '0');
    expect(isWellFormedKey('account', `service_acct_${body}${expected}`)).toBe(true);
    expect(isWellFormedKey('account', `service_acct_${body}00000000`)).toBe(expected === '00000000');
  });

  it('refuses a wrong checksum, upper case, a wrong length and the other kind', () => {
    const key = generateKey('account');
    const flipped = key.slice(0, -1) + (key.endsWith('0') ? '1' : '0');
    expect(isWellFormedKey('account', flipped)).toBe(false);
    expect(hasKeyShape('account', flipped)).toBe(true);
    expect(isWellFormedKey('account', key.toUpperCase())).toBe(false);
    expect(isWellFormedKey('account', key.slice(0, -1))).toBe(false);
    expect(isWellFormedKey('server', key)).toBe(false);
    expect(hasKeyShape('server', key)).toBe(false);
  });

  it('makes a different key each time', () => {
    const seen = new Set(Array.from({ length: 1000 }, () => generateKey('server')));
    expect(seen.size).toBe(1000);
  });

  it('stores a SHA-256 digest and shows only a hint of the last four characters', () => {
    const key = generateKey('account');
    expect(keyDigest(key)).toMatch(/^[0-9a-f]{64}$/);
    expect(keyDigest(key)).not.toContain(key.slice(13, 77));
    expect(keyHint(key)).toBe(`service_acct_…${key.slice(-4)}`);
    const serverKey = generateKey('server');
    expect(keyHint(serverKey)).toBe(`service_srv_…${serverKey.slice(-4)}`);
  });
});
