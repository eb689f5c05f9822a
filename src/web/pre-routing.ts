/**
 * Errors raised before a request reaches a route: a path the router cannot decode or whose parameter
 * is over its length limit (Fastify's frameworkErrors), an HTTP/1.1 request without a Host header
 * (Node's own check is off, web/arrival-limits.ts), and bytes Node cannot parse as HTTP at all or that
 * did not arrive in time (the server's clientError). They get the same answers as every other error:
 * under /v1 a problem with a contract code and an x-request-id (after the guard, where there is a
 * request to guard), a plain page on the end users' and dashboard users' pages. The path is never
 * echoed: keys get pasted into URLs.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { mentionsKey } from '../services/keys/key-format.js';
import { HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS } from './arrival-limits.js';
import { own } from './form-fields.js';
import { Problem } from './problem.js';
import { faultProblem, type ProblemResponder } from './problem-answers.js';
import { proxiedPathPrefix } from './proxy-paths.js';
import { rawAnswer, rawProblem } from './raw-answer.js';

export type Area = 'api' | 'dashboard' | 'pages' | 'other';

const AREAS: Record<string, Area> = { v1: 'api', dashboard: 'dashboard', connect: 'pages', oauth: 'pages' };

/**
 * Which part of the service a raw request target belongs to, from its first path segment. Escapes are
 * read byte by byte, leniently, so that `/%761/…` is the API even when the rest of the path is
 * undecodable; the router is case-sensitive and does not merge slashes, and neither does this.
 */
export function areaOf(target: string): Area {
  const path = target.split(/[?#]/, 1)[0]!;
  if (!path.startsWith('/')) return 'other';
  const first = path
    .slice(1)
    .split('/', 1)[0]!
    .replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return own(AREAS, first) ?? 'other';
}

/** A new request id; randomUUID draws from a cached pool of random bytes, cheaper than randomBytes per request. */
export function newRequestId(): string {
  return `req_${randomUUID().replaceAll('-', '')}`;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** A request's id: a valid incoming `x-request-id` is kept (CONTRACT 2.2), else a new one. */
export function requestIdFor(headers: IncomingHttpHeaders): string {
  const given = headers['x-request-id'];
  // A key pasted into the wrong header would otherwise be echoed back and logged.
  const usable = typeof given === 'string' && REQUEST_ID.test(given) && !mentionsKey(given);
  return usable ? given : newRequestId();
}

/** How an area answers an error that came before routing, as its own error handler would. */
export interface AreaErrors {
  /** On a request that has a reply: the area's page or problem+json. */
  respond: ProblemResponder;
  /** The page markup, for a socket that has no reply object; null where problem+json answers. */
  page(problem: Problem): string | null;
}

interface PreRoutingOptions {
  /** The management guard: throws the Problem a request without valid keys gets. */
  guard(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  areas: Record<Area, AreaErrors>;
  /** The headers of a page written straight on a socket. */
  pageHeaders: Readonly<Record<string, string>>;
  logger: FastifyBaseLogger;
}

/**
 * Whether the part that could not be decoded is a proxied path (CONTRACT 8.1), the route's own
 * segments before it decoding well: such a path, an overlong `%c0%ae` among them, is a target the
 * gateway refuses, and is answered with the gateway's code.
 */
function undecodableProxyPath(url: string): boolean {
  return proxiedPathPrefix(url)?.endsWith('/') ?? false;
}

function undecodable(error: { code?: string }, url: string): Problem {
  if (error.code !== 'FST_ERR_MAX_PARAM_LENGTH' && undecodableProxyPath(url)) {
    return new Problem(
      'proxy_target_not_allowed',
      "The proxied path is not valid percent-encoded UTF-8 (an overlong encoding such as %c0%ae is not), so it cannot be judged to stay on the provider's API.",
    );
  }
  const tooLong = error.code === 'FST_ERR_MAX_PARAM_LENGTH';
  const message = tooLong ? 'has a segment longer than the 4,096 characters a path parameter may take' : 'is not valid percent-encoded UTF-8';
  const detail = tooLong
    ? 'A path segment is too long; no valid value is that long.'
    : 'The path could not be decoded: every % must start a valid escape, and the escapes must spell UTF-8 (no lone surrogates).';
  return new Problem('validation_failed', detail, { errors: [{ path: '/path', message }] });
}

function unreadable(code: string | undefined): Problem {
  const [path, message, detail] =
    code === 'HPE_HEADER_OVERFLOW'
      ? ['/headers', 'are too large', 'The request headers are too large (over 16 KiB in all).']
      : code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [
            '/request',
            'did not arrive in time',
            `The request was not received in time: headers within ${HEADERS_TIMEOUT_MS / 1000} s, the whole request within ${REQUEST_TIMEOUT_MS / 1000} s.`,
          ]
        : ['/request', 'is not valid HTTP/1.1', 'The request is not valid HTTP/1.1 and could not be read.'];
  return new Problem('validation_failed', detail, { errors: [{ path, message }] });
}

const HOST_MISSING = () =>
  new Problem('validation_failed', 'An HTTP/1.1 request must carry a Host header (RFC 9112, section 3.2).', {
    errors: [{ path: '/headers/host', message: 'is required' }],
  });

/** The URL of the request a socket was reading when it timed out, if its headers had arrived. */
function targetOnSocket(socket: Socket): string {
  const response = (socket as Socket & { _httpMessage?: { req?: { url?: string } } })._httpMessage;
  return response?.req?.url ?? '';
}

export function preRoutingHandlers(options: PreRoutingOptions) {
  /**
   * Answers `problem` as the request's area does; under /v1 the guard speaks first, so a request
   * without valid keys learns nothing more than any other. Never throws: the callers' own callers
   * (Fastify's frameworkErrors, a hook) would turn a rejection into something else.
   */
  async function answer(request: FastifyRequest, reply: FastifyReply, problem: Problem): Promise<FastifyReply> {
    const area = areaOf(request.url);
    if (area === 'api') {
      try {
        await options.guard(request, reply);
      } catch (refusal) {
        problem = refusal instanceof Problem ? refusal : faultProblem(refusal as Error, request);
      }
    }
    return options.areas[area].respond(request, reply, problem);
  }

  async function frameworkErrors(error: Error & { code?: string }, request: FastifyRequest, reply: FastifyReply) {
    reply.header('x-request-id', request.id);
    await answer(request, reply, undecodable(error, request.url));
    request.log.info({ method: request.method, route: '(undecodable path)', statusCode: reply.statusCode }, 'request');
  }

  /** An onRequest hook: RFC 9112 (3.2) has a server answer 400 to an HTTP/1.1 request without Host. */
  async function hostRequired(request: FastifyRequest, reply: FastifyReply) {
    const { raw } = request;
    if (raw.headers.host !== undefined || raw.httpVersionMajor < 1 || (raw.httpVersionMajor === 1 && raw.httpVersionMinor === 0)) return;
    return answer(request, reply, HOST_MISSING());
  }

  /** No request object exists here: Node could not parse one. The answer is written on the socket and it is closed. */
  function clientErrorHandler(error: Error & { code?: string; rawPacket?: unknown }, socket: Socket) {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    // On a keep-alive connection a response may already be under way (a timeout mid-answer): a
    // second status line would corrupt it, so the socket is only closed, as Node's own handler does.
    const underWay = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
    // A connection that timed out without sending a byte asked nothing (a browser's spare, say): it is only closed.
    const silent = socket.bytesRead === 0;
    if (socket.writable && !underWay && !silent) {
      // Bytes Node could not parse carry their request line; a request cut off by a timeout, once its
      // headers were in, is still attached to the socket.
      const requestLine = Buffer.isBuffer(error.rawPacket) ? error.rawPacket.toString('latin1').split('\r\n', 1)[0]! : '';
      const area = areaOf(requestLine.split(' ')[1] ?? targetOnSocket(socket));
      const problem = unreadable(error.code);
      const requestId = newRequestId();
      const html = options.areas[area].page(problem);
      const answer =
        html === null
          ? rawProblem(problem, requestId)
          : rawAnswer(problem.status, { ...options.pageHeaders, 'content-type': 'text/html; charset=utf-8', 'x-request-id': requestId }, html);
      socket.write(answer);
      options.logger.info({ reqId: requestId, route: '(unparseable request)', statusCode: problem.status, reason: error.code }, 'request');
    }
    socket.destroy();
  }

  return { frameworkErrors, hostRequired, clientErrorHandler };
}
