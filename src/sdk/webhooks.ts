/**
 * verifyWebhook: Standard Webhooks verification of a request Keyward sent to a webhook endpoint. The
 * signature covers `{webhook-id}.{webhook-timestamp}.{raw body}`, so pass the body exactly as it
 * arrived (a string or the raw bytes), not JSON parsed and serialised again.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { WebhookEvent } from './bodies.js';
import { KeywardError, SDK_ERROR_CODES } from './keyward-error.js';

/** Headers as Node's IncomingMessage, a fetch Request, or a plain object carries them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /**
   * How far the timestamp may be from now, either way (default 300 s: older is a replay, newer a
   * forgery). A finite number of seconds, 0 or more; anything else is a TypeError at the call.
   */
  toleranceSeconds?: number;
  /** The time to check the timestamp against (default: now); an invalid Date is a TypeError. */
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

/**
 * The options as verifyWebhook uses them. A tolerance that is not a finite number of seconds (NaN
 * from an unset variable, Infinity, a string) or is negative would turn the replay window off or
 * refuse everything: it is the caller's mistake, not the request's, so it is a TypeError thrown at
 * once, never a KeywardError a receiver would answer 400 to (a 400 fails the delivery for good, where
 * the 500 of an uncaught error has Keyward retry it once the mistake is fixed).
 */
function checkedOptions(options: VerifyWebhookOptions): { toleranceSeconds: number; nowSeconds: number } {
  const toleranceSeconds = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (typeof toleranceSeconds !== 'number' || !Number.isFinite(toleranceSeconds) || toleranceSeconds < 0) {
    throw new TypeError(`verifyWebhook: toleranceSeconds must be a finite number of seconds, 0 or more (got ${String(toleranceSeconds)}).`);
  }
  const now = options.now ?? new Date();
  if (!(now instanceof Date) || Number.isNaN(now.getTime())) throw new TypeError('verifyWebhook: now must be a valid Date.');
  return { toleranceSeconds, nowSeconds: Math.floor(now.getTime() / 1000) };
}

/** The body's bytes; a KeywardError for anything but the raw body (a parsed JSON object is the usual mistake). */
function bodyBytes(body: unknown): Buffer {
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  throw refuse(
    `The body must be the raw request body, as a string or bytes (Buffer, Uint8Array), not ${body === null ? 'null' : typeof body}: the signature covers the exact bytes sent.`,
  );
}

/**
 * Whether one of the space-separated `v1,<signature>` entries is exactly `expected`. Each signature is
 * compared as text with the canonical base64 of the MAC, as the standardwebhooks package does: no
 * base64url, no missing padding, no trailing characters a lenient decoder would skip. Entries of other
 * versions are skipped.
 */
function anySignatureMatches(header: string, expected: Buffer): boolean {
  const wanted = Buffer.from(expected.toString('base64'), 'utf8');
  return header.split(' ').some((entry) => {
    const comma = entry.indexOf(',');
    if (comma < 0 || entry.slice(0, comma) !== 'v1') return false;
    const given = Buffer.from(entry.slice(comma + 1), 'utf8');
    return given.length === wanted.length && timingSafeEqual(given, wanted);
  });
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
  const { toleranceSeconds, nowSeconds } = checkedOptions(options);
  const raw = bodyBytes(body);
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!/^\d{1,12}$/.test(timestamp)) throw refuse('The webhook-timestamp header is not a Unix time in seconds.');
  if (Math.abs(nowSeconds - Number(timestamp)) > toleranceSeconds) throw refuse(`The webhook-timestamp is more than ${toleranceSeconds} seconds from now.`);

  const expected = createHmac('sha256', secretBytes(secret)).update(`${id}.${timestamp}.`).update(raw).digest();
  // Several signatures during a secret rotation: one matching is enough.
  if (!anySignatureMatches(signatures, expected)) throw refuse('No signature matches this secret and body.');

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
