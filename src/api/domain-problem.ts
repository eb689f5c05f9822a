/**
 * How the management API answers a service's refusal: a code the contract lists (CONTRACT 2.2) becomes
 * that Problem; any other code reaching /v1 is a route calling a service it should not, so it is null
 * here and the error handler answers internal_error and logs it.
 */

import type { DomainError } from '../services/domain-error.js';
import { ERRORS, type ErrorCode, Problem } from '../web/problem.js';

type InputLocation = 'body' | 'query';

function isContractCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERRORS, code);
}

/** `where` says which part of the request the error's field was read from (validation_failed only). */
export function problemOf(error: DomainError, where: InputLocation = 'body'): Problem | null {
  if (!isContractCode(error.code)) return null;
  if (error.code !== 'validation_failed') return new Problem(error.code, error.detail);
  const errors = error.field === undefined ? [] : [{ path: `/${where}/${error.field}`, message: error.detail }];
  return new Problem('validation_failed', error.detail, { errors });
}
