/**
 * The one error handler and the not-found handler. Every failure leaves as application/problem+json
 * (the hosted form's pages render their own HTML); unknown errors become internal_error carrying only
 * the request id, and are logged without the request's body or headers.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Problem, problemBody } from '../errors.js';
import { fieldErrors } from './validation.js';

const FASTIFY_CODES: Record<string, () => Problem> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => new Problem('payload_too_large', 'The request body is over 64 KiB.'),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => new Problem('unsupported_media_type', 'Send the body as application/json.'),
  FST_ERR_CTP_INVALID_JSON_BODY: () => new Problem('invalid_json', 'The body is not valid JSON.'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new Problem('invalid_json', 'The body is empty; send a JSON object.'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new Problem('invalid_json', 'The body does not match its Content-Length.'),
};

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

export type HtmlErrorRenderer = (request: FastifyRequest, reply: FastifyReply, problem: Problem) => FastifyReply | null;

export function registerProblemHandlers(app: FastifyInstance, renderHtml: HtmlErrorRenderer) {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    let problem = toProblem(error);
    if (!problem) {
      request.log.error({ err: { type: error.name, message: error.message, stack: error.stack } }, 'unhandled error');
      problem = new Problem('internal_error', `Something went wrong on our side. Quote the request id ${request.id} when you report it.`);
    }
    return renderHtml(request, reply, problem) ?? sendProblem(reply, problem, request.id);
  });

  app.setNotFoundHandler((request, reply) => {
    const problem = routeNotFound(request.method);
    return renderHtml(request, reply, problem) ?? sendProblem(reply, problem, request.id);
  });
}
