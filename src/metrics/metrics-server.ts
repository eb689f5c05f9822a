/**
 * The metrics listener (KEYWARD_METRICS_PORT): its own socket, apart from the API's, so the series
 * are never reachable where the API is exposed. It answers `GET /metrics` (and HEAD) and nothing else,
 * with a plain node:http server: no routing, no body parsing, nothing a scraper could reach beyond it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Metrics } from './metrics.js';

export interface MetricsServer {
  /** `http://host:port`, with the port the system gave when 0 was asked. */
  address: string;
  close(): Promise<void>;
}

function answer(
  metrics: Metrics,
  method: string | undefined,
  url: string | undefined,
): Promise<{ status: number; type: string; body: string; allow?: string }> {
  const path = (url ?? '').split('?')[0];
  if (path !== '/metrics') return Promise.resolve({ status: 404, type: 'text/plain; charset=utf-8', body: 'Not found: metrics are at /metrics\n' });
  if (method !== 'GET' && method !== 'HEAD')
    return Promise.resolve({ status: 405, type: 'text/plain; charset=utf-8', body: 'Method not allowed\n', allow: 'GET, HEAD' });
  return metrics.text().then((body) => ({ status: 200, type: metrics.contentType, body }));
}

export async function startMetricsServer(metrics: Metrics, options: { host: string; port: number }): Promise<MetricsServer> {
  const server: Server = createServer((request, response) => {
    answer(metrics, request.method, request.url).then(
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
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port, family } = server.address() as AddressInfo;
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
