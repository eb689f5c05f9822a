/**
 * How the management API answers a service's refusal: a code the contract lists (CONTRACT 2.2) becomes
 * that Problem; any other code reaching /v1 is a route calling a service it should not, so it is null
 * here and the error handler answers internal_error and logs it.
 */
import type { FastifyError, FastifyRequest } from 'fastify';
import { ERRORS, Problem, type ErrorCode } from '../errors.js';
import { DomainError } from '../services/domain-error.js';
import type { ErrorReader } from '../web/problems.js';

export type InputLocation = 'body' | 'query';

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

/** The API's reading of a thrown error: a refused field found in the query string is reported under /query, else /body. */
export const readDomainError: ErrorReader = (error: FastifyError, request: FastifyRequest) => {
  if (!(error instanceof DomainError)) return null;
  const query = request.query;
  const inQuery = error.field !== undefined && typeof query === 'object' && query !== null && Object.hasOwn(query, error.field);
  return problemOf(error, inQuery ? 'query' : 'body');
};
