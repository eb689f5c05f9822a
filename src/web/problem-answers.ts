/**
 * Errors as Problems, for every area: what a framework error (a bad body, a wrong media type, a
 * failed schema) means in the contract's codes, the problem+json answer, and the error and not-found
 * handlers an area installs on its own scope with the way it answers (problem+json or a page).
 * Unknown errors become internal_error carrying only the request id, and are logged without the
 * request's body or headers; a database that cannot be reached is database_unavailable (faultProblem).
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DatabaseUnavailable } from '../store/store-errors.js';
import type { AreaErrors } from './pre-routing.js';
import { Problem, problemBody } from './problem.js';
import { fieldErrors } from './validation.js';

const FASTIFY_CODES: Record<string, () => Problem> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => new Problem('payload_too_large', 'The request body is over 64 KiB.'),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => new Problem('unsupported_media_type', 'Send the body as application/json.'),
  FST_ERR_CTP_INVALID_JSON_BODY: () => new Problem('invalid_json', 'The body is not valid JSON.'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new Problem('invalid_json', 'The body is empty; send a JSON object.'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new Problem('invalid_json', 'The body does not match its Content-Length.'),
};

/** The Problem a framework error (or a thrown Problem) means, or null for a fault. */
export function toProblem(error: FastifyError): Problem | null {
  if (error instanceof Problem) return error;
  if (error.validation) {
    return new Problem('validation_failed', 'The request has invalid fields; see errors.', {
      errors: fieldErrors(error.validation as never, error.validationContext ?? 'body'),
    });
  }
  const known = error.code ? FASTIFY_CODES[error.code] : undefined;
  if (known) return known();
  if (error instanceof SyntaxError && error.statusCode === 400) return new Problem('invalid_json', 'The body is not valid JSON.');
  if (error.statusCode === 413) return FASTIFY_CODES.FST_ERR_CTP_BODY_TOO_LARGE!();
  if (error.statusCode === 415) return FASTIFY_CODES.FST_ERR_CTP_INVALID_MEDIA_TYPE!();
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return new Problem('validation_failed', 'The request could not be read.', { errors: [] });
  }
  return null;
}

export function sendProblem(reply: FastifyReply, problem: Problem, requestId: string): FastifyReply {
  reply.code(problem.status).headers(problem.headers).type('application/problem+json');
  return reply.send(JSON.stringify(problemBody(problem, requestId)));
}

/** The path is not echoed: a caller may have put something secret in it by mistake. */
export function routeNotFound(method: string): Problem {
  return new Problem('route_not_found', `No route answers ${method} on this path. The API reference is at /openapi.json.`);
}

/** How an area answers a problem: problem+json under /v1, its own page elsewhere. */
export type ProblemResponder = (request: FastifyRequest, reply: FastifyReply, problem: Problem) => FastifyReply;

/** An area's own reading of errors it knows better than the framework does (a service's refusal); null passes. */
export type ErrorReader = (error: FastifyError, request: FastifyRequest) => Problem | null;

export function internalError(request: FastifyRequest): Problem {
  return new Problem('internal_error', `Something went wrong on our side. Quote the request id ${request.id} when you report it.`);
}

/** Seconds a client is asked to wait when the database cannot be reached: about what a server takes to restart. */
const DATABASE_RETRY_AFTER_SECONDS = 3;

/** 503 database_unavailable: the request was right, the database is gone for now; retrying later works. */
function databaseUnavailable(): Problem {
  return new Problem(
    'database_unavailable',
    `Keyward cannot reach its database right now. Retry after ${DATABASE_RETRY_AFTER_SECONDS} seconds (a POST with the same Idempotency-Key is safe to send again).`,
    { headers: { 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) } },
  );
}

/** What a page (the dashboard's, an end user's) says for database_unavailable: no cause, only when to come back. */
export const UNAVAILABLE_PAGE = { title: 'Service briefly unavailable', text: 'This service is briefly unavailable. Try again in a moment.' } as const;

/**
 * What an error nothing else read means, logged once: a database that cannot be reached is 503
 * database_unavailable (a warning naming only the reason's code: the driver's message can name the
 * host), anything else a fault, 500 internal_error.
 */
export function faultProblem(error: Error, request: FastifyRequest): Problem {
  if (error instanceof DatabaseUnavailable) {
    request.log.warn({ reason: error.reason }, 'database unreachable');
    return databaseUnavailable();
  }
  request.log.error({ err: { type: error.name, message: error.message, stack: error.stack } }, 'unhandled error');
  return internalError(request);
}

/**
 * The error and not-found handlers of one area's scope, answering with `respond`. A not-found
 * handler belongs to a prefix, so an unknown path under /dashboard gets the dashboard's page and one
 * under /v1 the API's problem, whatever the other areas do.
 */
export function answerErrors(scope: FastifyInstance, respond: ProblemResponder, read: ErrorReader = () => null) {
  scope.setErrorHandler((error: FastifyError, request, reply) => {
    const problem = read(error, request) ?? toProblem(error) ?? faultProblem(error, request);
    return respond(request, reply, problem);
  });
  scope.setNotFoundHandler((request, reply) => respond(request, reply, routeNotFound(request.method)));
}

/** The answer outside every area (probes, assets, unknown paths) and under /v1: problem+json. */
export const respondWithProblem: ProblemResponder = (request, reply, problem) => sendProblem(reply, problem, request.id);

/** The errors of an area that answers problem+json, before routing as after: the API's, and those outside every area. */
export const PROBLEM_JSON_ERRORS: AreaErrors = { respond: respondWithProblem, page: () => null };
