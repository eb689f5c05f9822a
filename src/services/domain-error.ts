/**
 * The one error a service throws when a rule refuses what it was asked (an unknown id, a taken name, a
 * limit, a bad input). It knows nothing of HTTP, pages or exit codes: the management API, the dashboard
 * and the CLI each map it once (api/domain-problem.ts, dashboard/domain-errors.ts, cli/main.ts).
 * Anything else a service lets through is a real fault.
 */
import { Answer } from '../primitives/answer.js';

/**
 * The closed list of codes, each with what it means. A code the management API can answer has the
 * contract's name (CONTRACT 2.2); the API answers no other code.
 */
export const DOMAIN_ERROR_CODES = {
  validation_failed: 'an input breaks a rule; `field` names it where one input is to blame',
  account_not_found: 'no account has that id',
  server_not_found: 'no server has that id',
  account_key_not_found: 'no account API key has that id',
  user_not_found: 'no dashboard user has that id',
  provider_not_found: "no provider of that slug in the catalog or among the server's custom providers",
  webhook_not_found: 'no webhook endpoint has that id (on that server, where one is named)',
  webhook_message_not_found: 'no webhook message has that id (on that server, where one is named)',
  end_user_not_found: "the server's audience has no member of that externalUserId",
  credential_not_found: 'the member has no credential of that provider',
  email_taken: 'a dashboard user already signs in with that email',
  last_owner: 'the change would leave the account without an owner',
  role_not_allowed: "the acting user's role may not give, change or remove that role",
  team_limit_reached: 'the account has as many users (with its pending invitations) as it may',
  sso_required: 'the account requires single sign-on: passwords are off for all but its owners',
  provider_slug_taken: "the slug names a built-in provider or one of the server's custom providers already",
  key_limit_reached: 'the account has as many unrevoked account API keys as it may',
  webhook_limit_reached: 'the server has as many webhook endpoints as it may',
  webhook_message_not_failed: 'only a failed webhook message can be resent',
  provider_not_enabled: 'the provider is not enabled (or has no OAuth client) on the server',
  provider_auth_mismatch: 'an OAuth provider was asked for static credentials, or the reverse',
  redirect_uri_not_allowed: "the redirect URI is not on the server's allowed list",
  invalid_cursor: 'the cursor is not one the API returned',
  idempotency_key_reused: 'the Idempotency-Key was used with another request within 24 hours',
  credential_needs_reauth: 'the credential the gateway would use needs the end user to connect again',
  proxy_not_supported: 'the provider has no API base URL (or, for a check, no verify request), so no call can be made through the gateway',
  proxy_target_not_allowed: "the proxied path, or the base URL picked, would leave the provider's API",
  provider_unavailable: 'the provider could not be reached, or broke off its answer before any byte of it was sent on',
  provider_timeout: 'the provider did not start answering in time',
} as const;

export type DomainErrorCode = keyof typeof DOMAIN_ERROR_CODES;

export class DomainError extends Answer {
  readonly code: DomainErrorCode;
  /**
   * The input it concerns, named as its caller names it in camelCase (an API body or query field, a
   * CLI option, a dashboard form field): `label`, `expiresAt`, `slug`, `clientId`, `fields`, …
   */
  readonly field: string | undefined;
  /** The sentence a person reads; never a secret. */
  readonly detail: string;

  constructor(code: DomainErrorCode, options: { field?: string; detail: string }) {
    super(options.detail);
    this.name = 'DomainError';
    this.code = code;
    this.field = options.field;
    this.detail = options.detail;
  }
}

/** Shorthand for the commonest refusal: one input breaks a rule. */
export function invalid(field: string | undefined, detail: string): DomainError {
  return new DomainError('validation_failed', { field, detail });
}
