/**
 * The one error the SDK throws. From Keyward, the fields of its problem document (CONTRACT 2.2);
 * otherwise one of the SDK's own codes (SDK_ERROR_CODES), with `status` null where nothing answered.
 */
import type { Problem } from './bodies.js';

export const SDK_ERROR_CODES = {
  /** The request never got an answer: refused, reset, or a name that does not resolve. */
  network: 'network_error',
  /** No answer within the client's `timeoutMs`. */
  timeout: 'timeout',
  /** An answer that is not Keyward's JSON: a proxy's HTML error page, a cut-off body. */
  invalidResponse: 'invalid_response',
  /** verifyWebhook refused a request: bad or missing signature, a stale timestamp, or a body that is not an event. */
  webhookVerification: 'webhook_verification_failed',
} as const;

export interface KeywardErrorFields {
  status: number | null;
  code: string;
  detail: string;
  requestId?: string | null;
  title?: string;
  type?: string;
  errors?: Problem['errors'];
}

export class KeywardError extends Error {
  override readonly name = 'KeywardError';
  /** The HTTP status; null where no answer came (network_error, timeout), for a webhook refusal, or for a proxied path the SDK refused to send (proxy_target_not_allowed). */
  readonly status: number | null;
  /** Keyward's stable error code (`end_user_not_found`, …) or one of SDK_ERROR_CODES. */
  readonly code: string;
  /** The request's id (x-request-id), to quote when reporting a problem; null where nothing answered. */
  readonly requestId: string | null;
  readonly detail: string;
  readonly title: string | undefined;
  readonly type: string | undefined;
  /** For validation_failed: each refused field, as `{ path: '/body/externalUserId', message }`. */
  readonly errors: Problem['errors'];

  constructor(fields: KeywardErrorFields, options?: { cause?: unknown }) {
    super(`${fields.code}: ${fields.detail}`, options);
    this.status = fields.status;
    this.code = fields.code;
    this.requestId = fields.requestId ?? null;
    this.detail = fields.detail;
    this.title = fields.title;
    this.type = fields.type;
    this.errors = fields.errors;
  }
}
