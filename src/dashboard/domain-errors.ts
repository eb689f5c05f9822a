/**
 * How the dashboard answers a service's refusal, in one place: a DomainError about one of the form's
 * fields becomes a message beside that field (an unknown provider chosen in a form too), one that names
 * a missing thing the page is about the 404 page (another account's ids look the same as unknown
 * ones), and any other a notice at the top of the form. The words
 * are the service's own; no page matches messages or repeats a service's rules.
 */

import { DomainError, type DomainErrorCode } from '../services/domain-error.js';
import { own } from '../web/form-fields.js';
import { Problem } from '../web/problem.js';
import type { ErrorReader } from '../web/problem-answers.js';
import { sentence } from './display-format.js';
import type { FieldErrors } from './forms.js';

const NOT_FOUND: ReadonlySet<DomainErrorCode> = new Set([
  'account_not_found',
  'server_not_found',
  'account_key_not_found',
  'user_not_found',
  'provider_not_found',
  'webhook_not_found',
  'webhook_message_not_found',
  'end_user_not_found',
  'credential_not_found',
]);

/** A limit is a conflict with what exists (409); any other refusal is about what was typed (422). */
const LIMITS: ReadonlySet<DomainErrorCode> = new Set(['key_limit_reached', 'webhook_limit_reached']);

export interface Refusal {
  code: DomainErrorCode;
  /** The message beside its field; empty when the refusal belongs to no field of this form. */
  errors: FieldErrors;
  /** The message at the top of the form, when it belongs to no field of it. */
  problem: string | undefined;
  status: 409 | 422;
}

/** Whether a service refused because the thing asked for does not exist. */
function isNotFound(error: unknown): boolean {
  return error instanceof DomainError && NOT_FOUND.has(error.code);
}

/** The 404 page for a missing thing, saying nothing of whose it was: the one way every dashboard page answers one. */
export function notFoundPage(): Problem {
  return new Problem('route_not_found', 'No such page in this account.');
}

/**
 * The dashboard's reading of a refusal that no form caught (a stale cursor in a link, an audience member
 * revoked meanwhile): a missing thing is the 404 page, anything else the page of a request not accepted.
 */
export const readRefusal: ErrorReader = (error) => {
  if (!(error instanceof DomainError)) return null;
  if (isNotFound(error)) return notFoundPage();
  return new Problem('validation_failed', sentence(error.detail), { errors: [] });
};

/**
 * Reads what a form's action threw. `fields` names the form's inputs by the services' field names:
 * `{ slug: 'oauthSlug', url: 'url' }`; a field the form does not show gets the notice instead.
 * Anything but a DomainError is a fault and is thrown again, as is a not-found of no field of the
 * form (the 404 page).
 */
export function refusalOf(error: unknown, fields: Readonly<Record<string, string>>): Refusal {
  if (!(error instanceof DomainError)) throw error;
  const field = error.field !== undefined ? own(fields, error.field) : undefined;
  if (!field && isNotFound(error)) throw notFoundPage();
  const message = sentence(error.detail);
  return {
    code: error.code,
    errors: field ? { [field]: message } : {},
    problem: field ? undefined : message,
    status: LIMITS.has(error.code) ? 409 : 422,
  };
}
