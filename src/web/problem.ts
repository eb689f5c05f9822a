/**
 * Problem details (RFC 9457) and the closed list of error codes. A handler throws a Problem; its
 * area's error handler (web/problem-answers.ts, answerErrors) renders it. A Problem's status comes from this
 * list alone. Pages and endpoints that answer a request themselves set their own status, for example:
 * the end users' form and OAuth callback pages, the dashboard's form-expired and sign-up-closed pages
 * (403), a dashboard form submitted twice (409, dashboard/form-once.ts), a dashboard form drawn again
 * with the service's refusal beside its field (409 for a limit reached, 422 for what was typed:
 * dashboard/domain-errors.ts), and the health check's 503.
 */
import { Answer } from '../primitives/answer.js';

export const ERRORS = {
  browser_access_forbidden: { status: 403, title: 'Browser access forbidden' },
  duplicate_header: { status: 400, title: 'Duplicate header' },
  account_key_missing: { status: 401, title: 'Account API key missing' },
  keys_swapped: { status: 401, title: 'Keys swapped' },
  account_key_malformed: { status: 401, title: 'Account API key malformed' },
  service_key_missing: { status: 401, title: 'Server API key missing' },
  service_key_malformed: { status: 401, title: 'Server API key malformed' },
  account_key_invalid: { status: 401, title: 'Account API key invalid' },
  account_key_revoked: { status: 401, title: 'Account API key revoked' },
  account_key_expired: { status: 401, title: 'Account API key expired' },
  service_key_invalid: { status: 401, title: 'Server API key invalid' },
  service_key_revoked: { status: 401, title: 'Server API key revoked' },
  server_access_denied: { status: 403, title: 'Server access denied' },
  server_not_business_mode: { status: 403, title: 'Server not in business mode' },
  rate_limited: { status: 429, title: 'Rate limited' },
  validation_failed: { status: 400, title: 'Validation failed' },
  invalid_json: { status: 400, title: 'Invalid JSON' },
  invalid_cursor: { status: 400, title: 'Invalid cursor' },
  redirect_uri_not_allowed: { status: 400, title: 'Redirect URI not allowed' },
  route_not_found: { status: 404, title: 'Route not found' },
  provider_not_found: { status: 404, title: 'Provider not found' },
  end_user_not_found: { status: 404, title: 'End user not found' },
  credential_not_found: { status: 404, title: 'Credential not found' },
  proxy_target_not_allowed: { status: 400, title: 'Proxy target not allowed' },
  credential_needs_reauth: { status: 409, title: 'Credential needs reauthorization' },
  proxy_not_supported: { status: 422, title: 'Proxy not supported' },
  provider_unavailable: { status: 502, title: 'Provider unavailable' },
  proxy_busy: { status: 503, title: 'Proxy busy' },
  provider_timeout: { status: 504, title: 'Provider timeout' },
  key_limit_reached: { status: 409, title: 'Key limit reached' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  provider_not_enabled: { status: 422, title: 'Provider not enabled' },
  provider_auth_mismatch: { status: 422, title: 'Provider auth mismatch' },
  idempotency_key_reused: { status: 422, title: 'Idempotency key reused' },
  internal_error: { status: 500, title: 'Internal error' },
  database_unavailable: { status: 503, title: 'Database unavailable' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ERRORS;

export interface FieldError {
  path: string;
  message: string;
}

/** An answer, not a fault: made without a stack trace (primitives/answer.ts). */
export class Problem extends Answer {
  readonly code: ErrorCode;
  readonly status: number;
  readonly detail: string;
  readonly errors?: FieldError[];
  /** Extra response headers that belong to this failure (WWW-Authenticate, Retry-After). */
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, detail: string, options: { errors?: FieldError[]; headers?: Record<string, string> } = {}) {
    super(detail);
    this.name = 'Problem';
    this.code = code;
    this.status = ERRORS[code].status;
    this.detail = detail;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
  }
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  requestId: string;
  errors?: FieldError[];
}

export function problemBody(problem: Problem, requestId: string): ProblemBody {
  const body: ProblemBody = {
    type: `/errors/${problem.code}`,
    title: ERRORS[problem.code].title,
    status: problem.status,
    detail: problem.detail,
    code: problem.code,
    requestId,
  };
  if (problem.errors) body.errors = problem.errors;
  return body;
}
