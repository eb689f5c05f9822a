/**
 * Standard Webhooks signing (CONTRACT 7): a secret is `whsec_` + base64 of 32 random bytes; a
 * signature is `v1,` + base64 HMAC-SHA-256 of `{id}.{timestamp}.{body}` keyed with the secret's
 * decoded bytes. During a rotation's grace period a message carries one signature per live secret.
 */
import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';

export function newWebhookSecret(): string {
  return PREFIX + randomBytes(32).toString('base64');
}

/** The associated data a secret is sealed with: its row and its endpoint, so it cannot be moved to another. */
export function webhookSecretAad(secretId: string, endpointId: string): string {
  return `webhook_secrets|${secretId}|${endpointId}`;
}

/** The HMAC key a secret stands for: the bytes its base64 part decodes to. Decoded once per secret read, not per message. */
export function webhookKey(secret: string): Buffer {
  return Buffer.from(secret.slice(PREFIX.length), 'base64');
}

/** The `webhook-signature` header's value: one `v1,` signature per key (see webhookKey), space-separated. */
export function webhookSignature(keys: readonly Buffer[], messageId: string, timestamp: number, body: string): string {
  const signed = `${messageId}.${timestamp}.${body}`;
  return keys.map((key) => `v1,${createHmac('sha256', key).update(signed).digest('base64')}`).join(' ');
}
