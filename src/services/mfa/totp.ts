/**
 * The one-time codes themselves (CONTRACT 9: TOTP, RFC 6238, SHA-1, 6 digits, 30 s, one step either
 * side), computed by a well-kept library (`otpauth`) rather than by hand. This file knows codes and
 * time steps only; which step may still be accepted is the database's to decide (mfa.ts).
 */
import { Secret, TOTP } from 'otpauth';

/** What codes are made and checked with, and what an authenticator app is told in the otpauth URI. */
const CODE_PARAMETERS = { algorithm: 'SHA1', digits: 6, period: 30 } as const;
const ISSUER = 'Keyward';
/** Steps either side of the current one still accepted: a phone's clock a little off, a code typed as it changed. */
const WINDOW = 1;
/** RFC 4226 recommends 160 bits, SHA-1's own length. */
const SECRET_BYTES = 20;

/** A fresh secret, as the base32 text an app is given (and a person may type). */
export function newTotpSecret(): string {
  return new Secret({ size: SECRET_BYTES }).base32;
}

/** The otpauth URI of the QR code: issuer "Keyward", labelled with the user's email. */
export function otpauthUri(secret: string, email: string): string {
  return new TOTP({ ...CODE_PARAMETERS, issuer: ISSUER, label: email, secret: Secret.fromBase32(secret) }).toString();
}

/** A code as typed, with the spaces some apps show in the middle taken out; null when it cannot be one. */
export function typedCode(text: string): string | null {
  const code = text.replace(/\s+/g, '');
  return /^\d{6}$/.test(code) ? code : null;
}

/**
 * The time step `code` belongs to at `now`, within one step either side of the current one; null when
 * it is the code of none of them. (Compared in constant time by the library.)
 */
export function stepOfCode(secret: string, code: string, now: Date): number | null {
  const timestamp = now.getTime();
  const delta = TOTP.validate({ ...CODE_PARAMETERS, token: code, secret: Secret.fromBase32(secret), timestamp, window: WINDOW });
  return delta === null ? null : TOTP.counter({ period: CODE_PARAMETERS.period, timestamp }) + delta;
}
