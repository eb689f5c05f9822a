/**
 * The provider's API for npm run bench:proxy: a plain node:http server on 127.0.0.1, run by Node itself
 * in its own process, as cheap as a server can be, so that what a proxy adds in front of it shows.
 *
 * - `GET|POST|… /v1/small…`: a fixed JSON body (267 bytes). A caller that sends `authorization`
 *   must send `Bearer <UPSTREAM_TOKEN>` (a proxy's injected credential), or is answered 401; one that
 *   sends `x-service-key` (a Keyward key, which must never reach a provider) is answered 400. The load
 *   then fails loudly (autocannon's non-2xx) instead of measuring a wrong answer.
 * - `GET /download?mib=N`: N MiB of bytes (`content-length` declared), written in 64 KiB chunks as
 *   fast as the reader takes them (each write waits for `drain`), so the memory test's body is
 *   streamed, never held.
 * - `POST|PUT /upload`: the body read and thrown away, then `{"received": <bytes>}`.
 * - `GET /ready`: 200 once listening.
 *
 * PORT, UPSTREAM_TOKEN.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

const token = process.env.UPSTREAM_TOKEN ?? '';
const expected = `Bearer ${token}`;
const SMALL = Buffer.from(
  JSON.stringify({
    id: 'ch_3NqBenchUpstream0001',
    object: 'charge',
    amount: 2000,
    currency: 'usd',
    status: 'succeeded',
    created: 1700000000,
    captured: true,
    livemode: false,
    metadata: { order: '6735', customer: 'cus_bench0001' },
    description: 'a small JSON answer for the proxy bench',
  }),
);
const CHUNK = Buffer.alloc(64 * 1024, 0x61);
const MiB = 1024 * 1024;

function json(res: ServerResponse, status: number, body: Buffer) {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': body.byteLength });
  res.end(body);
}

function download(res: ServerResponse, bytes: number) {
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes });
  let left = bytes;
  const write = () => {
    while (left > 0) {
      const chunk = left >= CHUNK.byteLength ? CHUNK : CHUNK.subarray(0, left);
      left -= chunk.byteLength;
      if (left === 0) {
        res.end(chunk);
        return;
      }
      if (!res.write(chunk)) {
        res.once('drain', write);
        return;
      }
    }
  };
  res.on('close', () => {
    left = 0;
  });
  write();
}

function upload(req: IncomingMessage, res: ServerResponse) {
  let received = 0;
  req.on('data', (chunk: Buffer) => {
    received += chunk.byteLength;
  });
  req.on('end', () => json(res, 200, Buffer.from(JSON.stringify({ received }))));
}

const server = createServer((req, res) => {
  const url = req.url ?? '/';
  if (url === '/ready') return json(res, 200, Buffer.from('{}'));
  const authorization = req.headers.authorization;
  if (authorization !== undefined && authorization !== expected) return json(res, 401, Buffer.from('{"error":"wrong credential"}'));
  if (req.headers['x-service-key'] !== undefined) return json(res, 400, Buffer.from('{"error":"a Keyward key reached the provider"}'));
  if (url.startsWith('/v1/small')) {
    // Any body sent along is read and dropped, so the connection stays usable.
    req.resume();
    return json(res, 200, SMALL);
  }
  if (url.startsWith('/download')) {
    const mib = Number(new URL(url, 'http://upstream').searchParams.get('mib') ?? 1);
    return download(res, mib * MiB);
  }
  if (url.startsWith('/upload')) return upload(req, res);
  req.resume();
  json(res, 404, Buffer.from('{"error":"not found"}'));
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 4002), '127.0.0.1');
