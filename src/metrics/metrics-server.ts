/**
 * The metrics listener (KEYWARD_METRICS_PORT): its own socket, apart from the API's, so the series
 * are never reachable where the API is exposed. It answers `GET /metrics` (and HEAD) and nothing else,
 * with a plain node:http server: no routing, no body parsing, nothing a scraper could reach beyond it.
 * Only to a Host that names it (allowed-hosts.ts): a page a local browser opened cannot read it
 * through DNS rebinding.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { type AddressInfo, isIP } from 'node:net';
import { hostEntry, hostOfHeader } from '../primitives/host-names.js';
import { HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS, TIMEOUT_CHECK_INTERVAL_MS } from '../web/arrival-limits.js';
import { type ListenerNames, namesListener } from './allowed-hosts.js';
import type { Metrics } from './metrics.js';

export interface MetricsListenerOptions {
  host: string;
  port: number;
  /** KEYWARD_METRICS_ALLOWED_HOSTS: names a scraper may use besides the listener's own addresses. */
  allowedHosts?: readonly string[];
}

type Answer = { status: number; type: string; body: string; allow?: string };

const PLAIN = 'text/plain; charset=utf-8';

/** Before anything else: a request that does not name this listener learns nothing of it, not even its paths. */
function misdirected(request: IncomingMessage, listener: ListenerNames): Answer | null {
  const given = request.headers.host;
  if (given === undefined) return { status: 400, type: PLAIN, body: 'Bad request: send a Host header\n' };
  const host = hostOfHeader(given);
  if (host !== null && namesListener(host, listener)) return null;
  return {
    status: 421,
    type: PLAIN,
    body: 'Misdirected request: this listener answers only to its own address, or to a name in KEYWARD_METRICS_ALLOWED_HOSTS\n',
  };
}

export interface MetricsServer {
  /** `http://host:port`, with the port the system gave when 0 was asked. */
  address: string;
  close(): Promise<void>;
}

function answer(metrics: Metrics, request: IncomingMessage, listener: ListenerNames): Promise<Answer> {
  const refused = misdirected(request, listener);
  if (refused) return Promise.resolve(refused);
  const path = (request.url ?? '').split('?')[0];
  if (path !== '/metrics') return Promise.resolve({ status: 404, type: PLAIN, body: 'Not found: metrics are at /metrics\n' });
  if (request.method !== 'GET' && request.method !== 'HEAD')
    return Promise.resolve({ status: 405, type: PLAIN, body: 'Method not allowed\n', allow: 'GET, HEAD' });
  return metrics.text().then((body) => ({ status: 200, type: metrics.contentType, body }));
}

export async function startMetricsServer(metrics: Metrics, options: MetricsListenerOptions): Promise<MetricsServer> {
  // The name KEYWARD_METRICS_HOST gave, when it is one, is the listener's too.
  const names = [...(options.allowedHosts ?? []), ...(isIP(options.host) ? [] : [options.host])].map(hostEntry).filter((name) => name !== null);
  const listener: ListenerNames = { bound: options.host, names };
  const server: Server = createServer(
    // The API's bounds on a request's arrival; Node's bare 400 for a missing Host is answered as above instead.
    {
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
      requireHostHeader: false,
    },
    (request, response) => {
      answer(metrics, request, listener).then(
        ({ status, type, body, allow }) => {
          response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', ...(allow ? { allow } : {}) });
          response.end(request.method === 'HEAD' ? undefined : body);
        },
        () => {
          // A collector that threw: the scrape fails, the service goes on. No detail leaves the process.
          response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
          response.end('Collecting metrics failed\n');
        },
      );
    },
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port, family } = server.address() as AddressInfo;
  // What the system bound: a name resolved to its address, or every address (0.0.0.0, ::).
  listener.bound = address;
  const host = family === 'IPv6' ? `[${address}]` : address;
  return {
    address: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // A scraper's kept-alive connection must not hold the stop.
        server.closeIdleConnections();
      }),
  };
}
