/**
 * A CONNECT request (an HTTP proxy's tunnel). Node never hands one to Fastify, and with no listener
 * it closes the connection without a word: a client pointed at Keyward as an HTTP proxy
 * (HTTPS_PROXY=…), an easy mistake with a service that calls itself a gateway, would see only a
 * reset. It gets the problem+json every unknown route gets, naming the gateway's path, and its
 * request line; the connection is then closed, since after CONNECT it no longer carries HTTP.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { newRequestId } from './pre-routing.js';
import { Problem, problemBody } from './problem.js';

const NOT_A_PROXY = new Problem(
  'route_not_found',
  'No route answers CONNECT: Keyward is not an HTTP proxy. Its gateway is /v1/end-users/{externalUserId}/proxy/{provider}/{path}, called with both keys.',
);

export function answerConnectMethod(logger: FastifyBaseLogger): (request: IncomingMessage, socket: Duplex) => void {
  return (_request, socket) => {
    const requestId = newRequestId();
    const body = JSON.stringify(problemBody(NOT_A_PROXY, requestId));
    socket.on('error', () => undefined);
    socket.end(
      `HTTP/1.1 ${NOT_A_PROXY.status} Not Found\r\n` +
        `x-request-id: ${requestId}\r\n` +
        'content-type: application/problem+json; charset=utf-8\r\n' +
        `content-length: ${Buffer.byteLength(body)}\r\n` +
        'connection: close\r\n\r\n' +
        body,
    );
    logger.info({ reqId: requestId, method: 'CONNECT', route: '(no route)', statusCode: NOT_A_PROXY.status, ms: 0 }, 'request');
  };
}
