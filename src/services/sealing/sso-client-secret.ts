/**
 * An account's OpenID Connect client secret (services/sso), sealed like every secret (CONTRACT 9):
 * bound to its account's id, so a sealed value copied to another account's row no longer opens. Here
 * rather than in sso/, which signs people in (and so imports users/, which imports sealing/): the
 * master-key rotation (sealed-value-aad.ts) needs only this, and the folders keep no import cycle.
 */
import type { Vault } from '../../primitives/vault.js';

export function ssoClientSecretAad(accountId: string): string {
  return `account_sso|${accountId}`;
}

export function sealSsoClientSecret(vault: Vault, accountId: string, secret: string): Buffer {
  return vault.seal(secret, ssoClientSecretAad(accountId));
}

export function openSsoClientSecret(vault: Vault, accountId: string, sealed: Uint8Array): string {
  return vault.open(sealed, ssoClientSecretAad(accountId));
}
