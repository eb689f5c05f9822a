/**
 * A provider's token and revocation endpoints on 127.0.0.1 that answer as the test scripts them: good
 * tokens, or the hostile answers CONTRACT 3 guards against (a redirect, a body past 1 MiB, a token or
 * scope past 16 KiB, an overlong token_type). Every request and connection is counted, so a test can see
 * that a refused call never arrived.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type TokenEndpointMode =
  /** A token response with a refresh token and a one-hour access token. */
  | 'tokens'
  /** 307 to `redirectTo`. */
  | 'redirect'
  /** A valid token response padded to 2 MiB, its Content-Length declared. */
  | 'declared-2mib'
  /** A valid token response whose first 1 MiB + 64 KiB arrive at once; the rest only after 2 s, unless
   * the client hung up first (recorded in `streamEnds`). */
  | 'stream-past-cap'
  /** A small body whose access_token is 17 KiB. */
  | 'big-token'
  /** Good tokens with a granted `scope` of 17 KiB (stored and served on every read). */
  | 'big-scope'
  /** Good tokens with a `token_type` of 65 characters (sealed into the secret). */
  | 'long-token-type';

export interface RecordedCall {
  method: string;
  path: string;
  host: string;
}

export interface ScriptedTokenEndpoint {
  /** http://127.0.0.1:<port> */
  url: string;
  port: number;
  tokenUrl: string;
  revocationUrl: string;
  mode: TokenEndpointMode;
  redirectTo: string;
  /** Every request received, in order. */
  requests: RecordedCall[];
  /** TCP connections accepted: a connection whose TLS handshake then failed sends no request, but counts here. */
  connections: number;
  /** How each 'stream-past-cap' answer ended: the client closed the connection early, or read it all. */
  streamEnds: ('closed-early' | 'finished')[];
  close(): Promise<void>;
}

const KIB = 1024;

function tokens(res: ServerResponse, extra: Record<string, unknown> = {}): void {
  const body = JSON.stringify({
    access_token: `at_${randomBytes(16).toString('hex')}`,
    token_type: 'bearer',
    expires_in: 3600,
    refresh_token: `rt_${randomBytes(16).toString('hex')}`,
    scope: 'api:read',
    ...extra,
  });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

export async function startScriptedTokenEndpoint(): Promise<ScriptedTokenEndpoint> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      endpoint.requests.push({ method: req.method ?? '', path: req.url ?? '', host: req.headers.host ?? '' });
      if (req.url === '/revoke') return res.writeHead(200).end();
      switch (endpoint.mode) {
        case 'tokens':
          return tokens(res);
        case 'redirect':
          return res.writeHead(307, { location: endpoint.redirectTo }).end();
        case 'declared-2mib':
          return tokens(res, { padding: 'a'.repeat(2048 * KIB) });
        case 'big-token':
          return tokens(res, { access_token: 'a'.repeat(17 * KIB) });
        case 'big-scope':
          return tokens(res, { scope: 'api:read '.repeat(2 * KIB) });
        case 'long-token-type':
          return tokens(res, { token_type: 'b'.repeat(65) });
        case 'stream-past-cap': {
          res.writeHead(200, { 'content-type': 'application/json' }); // chunked: no length to refuse it by
          res.write(`{"access_token":"at_streamed","token_type":"bearer","padding":"${'a'.repeat(1088 * KIB)}`);
          const rest = setTimeout(() => {
            endpoint.streamEnds.push('finished');
            res.end('"}');
          }, 2000);
          res.on('close', () => {
            if (!res.writableFinished) {
              clearTimeout(rest);
              endpoint.streamEnds.push('closed-early');
            }
          });
        }
      }
    });
  });
  server.on('connection', () => {
    endpoint.connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  const endpoint: ScriptedTokenEndpoint = {
    url,
    port,
    tokenUrl: `${url}/token`,
    revocationUrl: `${url}/revoke`,
    mode: 'tokens',
    redirectTo: '',
    requests: [],
    connections: 0,
    streamEnds: [],
    async close() {
      const closed = new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
      server.closeAllConnections();
      await closed;
    },
  };
  return endpoint;
}
