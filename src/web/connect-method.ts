/**
 * A CONNECT request (an HTTP proxy's tunnel). Node never hands one to Fastify, and with no listener
 * it closes the connection without a word: a client pointed at Keyward as an HTTP proxy
 * (HTTPS_PROXY=…), an easy mistake with a service that calls itself a gateway, would see only a
 * closed connection. It gets the problem+json every unknown route gets, naming the gateway's path,
 * and its 'request' log line. The connection is then closed: after CONNECT it no longer carries HTTP.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { requestIdFor } from './pre-routing.js';
import { Problem } from './problem.js';
import { rawProblem } from './raw-answer.js';

const NOT_A_PROXY = new Problem(
  'route_not_found',
  'No route answers CONNECT: Keyward is not an HTTP proxy. Its gateway is /v1/end-users/{externalUserId}/proxy/{provider}/{path}, called with both keys.',
);

/**
 * How long the client has to close its side after the answer. Node has let go of the socket (no
 * arrival limit watches it any more, arrival-limits.ts), and it allows half-open connections: without
 * this a client could hold the socket, and the service's shutdown, for as long as it liked.
 */
export const CONNECT_CLOSE_MS = 5_000;

export function answerConnectMethod(logger: FastifyBaseLogger, answered?: (statusCode: number) => void): (request: IncomingMessage, socket: Duplex) => void {
  return (request, duplex) => {
    const socket = duplex as Socket;
    socket.on('error', () => undefined);
    // A CONNECT pipelined behind a request still being answered: a status line now would land inside
    // that answer, so the connection is only closed, as Node's own handler would.
    if ((socket as Socket & { _httpMessage?: unknown })._httpMessage) {
      socket.destroy();
      return;
    }
    const requestId = requestIdFor(request.headers);
    socket.end(rawProblem(NOT_A_PROXY, requestId));
    // What the client sends meanwhile is read and dropped (unread bytes would keep the socket from ending).
    socket.resume();
    const closing = setTimeout(() => socket.destroy(), CONNECT_CLOSE_MS).unref();
    socket.once('close', () => clearTimeout(closing));
    logger.info({ reqId: requestId, method: 'CONNECT', route: '(no route)', statusCode: NOT_A_PROXY.status, ms: 0 }, 'request');
    answered?.(NOT_A_PROXY.status);
  };
}
