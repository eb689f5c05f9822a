/**
 * A user's TOTP secret, sealed like every secret (CONTRACT 9): bound to the user's id, so a sealed
 * value copied to another user's row no longer opens. Apart from the rest of the one-time codes so
 * that the master-key check and rotation (sealing/sealed-value-aad.ts) load only this.
 */
import type { Vault } from '../../primitives/vault.js';

export function totpSecretAad(userId: string): string {
  return `user_totp|${userId}`;
}

export function sealTotpSecret(vault: Vault, userId: string, secret: string): Buffer {
  return vault.seal(secret, totpSecretAad(userId));
}

export function openTotpSecret(vault: Vault, userId: string, sealed: Uint8Array): string {
  return vault.open(sealed, totpSecretAad(userId));
}
