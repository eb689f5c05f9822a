/**
 * A CONNECT request (a client that took Keyward for an HTTP proxy) is answered, not dropped: the
 * route_not_found problem+json of any unknown route, naming the gateway's path, with its request id
 * and its request line in the log; then the connection is closed, and the service answers the next.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

/** Everything the service wrote back on a raw connection until it closed it. */
function exchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
    socket.setTimeout(10_000, () => socket.destroy(new Error(`no close after: ${JSON.stringify(received)}`)));
  });
}

describe('CONNECT', () => {
  let t: TestApp;
  let port: number;

  beforeAll(async () => {
    t = await startTestApp('sqlite');
    const address = await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = Number(new URL(address).port);
  });
  afterAll(async () => {
    await t.close();
  });

  it('is answered 404 route_not_found in problem+json, naming the gateway, and the connection closed', async () => {
    const answer = await exchange(port, 'CONNECT api.github.com:443 HTTP/1.1\r\nHost: api.github.com:443\r\n\r\n');
    const [head, body] = answer.split('\r\n\r\n') as [string, string];
    const [statusLine, ...headerLines] = head.split('\r\n');
    expect(statusLine).toBe('HTTP/1.1 404 Not Found');
    const headers = Object.fromEntries(headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
    expect(headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(headers.connection).toBe('close');
    expect(Number(headers['content-length'])).toBe(Buffer.byteLength(body));
    const problem = JSON.parse(body) as Record<string, unknown>;
    expect(problem).toEqual({
      type: '/errors/route_not_found',
      title: 'Route not found',
      status: 404,
      detail: expect.stringContaining('/v1/end-users/{externalUserId}/proxy/{provider}/{path}'),
      code: 'route_not_found',
      requestId: headers['x-request-id'],
    });
    expect(problem.requestId).toMatch(/^req_[0-9a-f]{32}$/);
    const line = t.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.reqId === problem.requestId);
    expect(line).toMatchObject({ msg: 'request', method: 'CONNECT', route: '(no route)', statusCode: 404 });
  });

  it('leaves the service answering the next connection', async () => {
    await exchange(port, 'CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n');
    const answer = await exchange(port, 'GET /healthz HTTP/1.1\r\nHost: keyward.test\r\nConnection: close\r\n\r\n');
    expect(answer.startsWith('HTTP/1.1 200 OK\r\n')).toBe(true);
  });
});
