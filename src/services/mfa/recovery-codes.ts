/**
 * Recovery codes (CONTRACT 9): ten per user, shown once, each good for one sign-in without the app.
 * Made to be copied onto paper and typed back: `xxxx-xxxx-xxxx` in Crockford's base32 alphabet (lower
 * case, no i, l, o or u), 60 random bits each. What is typed back is read the same way whatever its
 * case, dashes or spaces, and with the letters a person mistakes for digits (i, l, o) read as the
 * digits. Only a digest is kept, salted with the user's id, so equal codes of two users do not match.
 */
import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../../primitives/digest.js';

export const RECOVERY_CODE_COUNT = 10;

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const GROUPS = 3;
const GROUP_LENGTH = 4;
const LENGTH = GROUPS * GROUP_LENGTH;
/** What a person may type for a character the alphabet leaves out. */
const LOOK_ALIKES: Record<string, string> = { i: '1', l: '1', o: '0' };

const grouped = (code: string) => code.match(new RegExp(`.{${GROUP_LENGTH}}`, 'g'))!.join('-');

/** A new code, as shown: `xxxx-xxxx-xxxx`. Each character takes 5 bits of one random byte (32 divides 256: no bias). */
export function newRecoveryCode(): string {
  const bytes = randomBytes(LENGTH);
  return grouped([...bytes].map((byte) => ALPHABET[byte % ALPHABET.length]).join(''));
}

/** A typed code in its one spelling (12 characters of the alphabet), or null when it cannot be one. */
export function typedRecoveryCode(text: string): string | null {
  const code = [...text.toLowerCase().replace(/[\s-]+/g, '')].map((c) => LOOK_ALIKES[c] ?? c).join('');
  return code.length === LENGTH && [...code].every((c) => ALPHABET.includes(c)) ? code : null;
}

/** The digest kept of a user's code (given as `typedRecoveryCode` spells it, or as shown). */
export function recoveryCodeDigest(userId: string, code: string): string {
  return sha256Hex(`recovery-code|${userId}|${code.replaceAll('-', '')}`);
}
