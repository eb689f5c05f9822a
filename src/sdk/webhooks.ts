/**
 * verifyWebhook: Standard Webhooks verification of a request Keyward sent to a webhook endpoint. The
 * signature covers `{webhook-id}.{webhook-timestamp}.{raw body}`, so pass the body exactly as it
 * arrived (a string or the raw bytes), not JSON parsed and serialised again.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { KeywardError, SDK_ERROR_CODES } from './errors.js';
import type { WebhookEvent } from './types.js';

/** Headers as Node's IncomingMessage, a fetch Request, or a plain object carries them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** How far the timestamp may be from now, either way (default 300 s: older is a replay, newer a forgery). */
  toleranceSeconds?: number;
  /** The time to check the timestamp against (default: now). */
  now?: Date;
}

const SECRET_PREFIX = 'whsec_';
const DEFAULT_TOLERANCE_SECONDS = 5 * 60;

function refuse(detail: string): KeywardError {
  return new KeywardError({ status: null, code: SDK_ERROR_CODES.webhookVerification, detail });
}

function header(headers: WebhookHeaders, name: string): string {
  const value = headers instanceof Headers ? headers.get(name) : (headers[name] ?? headers[name.toLowerCase()]);
  const single = Array.isArray(value) ? value[0] : value;
  if (!single) throw refuse(`The ${name} header is missing.`);
  return single;
}

function secretBytes(secret: string): Buffer {
  const bytes = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  if (bytes.length === 0) throw refuse('The webhook secret is empty; pass the whsec_… secret shown when the endpoint was added.');
  return bytes;
}

/**
 * The event, typed by its `type`, once the signature, the timestamp and the body hold; a KeywardError
 * with code `webhook_verification_failed` otherwise. `secret` is the endpoint's `whsec_…` secret.
 */
export function verifyWebhook(headers: WebhookHeaders, body: string | Uint8Array, secret: string, options: VerifyWebhookOptions = {}): WebhookEvent {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!/^\d{1,12}$/.test(timestamp)) throw refuse('The webhook-timestamp header is not a Unix time in seconds.');
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (Math.abs(now - Number(timestamp)) > tolerance) throw refuse(`The webhook-timestamp is more than ${tolerance} seconds from now.`);

  const raw = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const expected = createHmac('sha256', secretBytes(secret)).update(`${id}.${timestamp}.`).update(raw).digest();
  // Several signatures during a secret rotation: one matching is enough. Versions other than v1 are skipped.
  const matches = signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',', 2);
    if (version !== 'v1' || !signature) return false;
    const given = Buffer.from(signature, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw refuse('No signature matches this secret and body.');

  let event: unknown;
  try {
    event = JSON.parse(raw.toString('utf8'));
  } catch {
    throw refuse('The body is signed but is not JSON.');
  }
  if (typeof event !== 'object' || event === null || typeof (event as { type?: unknown }).type !== 'string') {
    throw refuse('The body is signed but is not an event.');
  }
  return event as WebhookEvent;
}
