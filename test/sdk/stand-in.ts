/**
 * A real HTTP server in front of Keyward, for the SDK's retry and failure tests: it forwards each
 * request (recording what went and what came back), unless the test scripted the next answer: a
 * status of its own, Keyward's answer lost and replaced by a status (the request still reached
 * Keyward), no answer at all, the connection closed without one, or a 200 cut off half-way.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type StandInAnswer = { status: number; headers?: Record<string, string>; body?: string } | { forwardThenAnswer: number } | 'hang' | 'reset' | 'cut';

export interface Exchange {
  method: string;
  url: string;
  requestHeaders: IncomingHttpHeaders;
  /** Keyward's answer where the request was forwarded; null where the stand-in answered alone. */
  upstream: { status: number; headers: Headers; body: string } | null;
  /** What the client got (null: nothing, the request was held or its connection closed). */
  status: number | null;
  /** When the request arrived (ms). */
  at: number;
}

export interface StandIn {
  url: string;
  exchanges: Exchange[];
  script(...answers: StandInAnswer[]): void;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'content-encoding']);

function forwardable(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (!HOP_BY_HOP.has(name) && typeof value === 'string') out[name] = value;
  return out;
}

export async function startStandIn(upstream: string): Promise<StandIn> {
  const queue: StandInAnswer[] = [];
  const exchanges: Exchange[] = [];
  const held = new Set<ServerResponse>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const exchange: Exchange = { method: request.method!, url: request.url!, requestHeaders: request.headers, upstream: null, status: null, at: Date.now() };
      exchanges.push(exchange);
      const answer = queue.shift();
      if (answer === 'reset') {
        request.socket.destroy();
        return;
      }
      if (answer === 'cut') {
        exchange.status = 200;
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
        response.write('{"data":[', () => request.socket.destroy());
        return;
      }
      if (answer === 'hang') {
        held.add(response);
        response.on('close', () => held.delete(response));
        return;
      }
      if (answer && 'status' in answer) {
        exchange.status = answer.status;
        response.writeHead(answer.status, answer.headers ?? {});
        response.end(answer.body ?? '');
        return;
      }
      const body = chunks.length ? Buffer.concat(chunks) : undefined;
      const forwarded = await fetch(upstream + request.url, { method: request.method, headers: forwardable(request.headers), body });
      exchange.upstream = { status: forwarded.status, headers: forwarded.headers, body: await forwarded.text() };
      if (answer) {
        exchange.status = answer.forwardThenAnswer;
        response.writeHead(answer.forwardThenAnswer, { 'content-type': 'text/html' });
        response.end('<h1>Bad gateway</h1>');
        return;
      }
      exchange.status = forwarded.status;
      const headers: Record<string, string> = {};
      forwarded.headers.forEach((value, name) => {
        if (!HOP_BY_HOP.has(name)) headers[name] = value;
      });
      response.writeHead(forwarded.status, headers);
      response.end(exchange.upstream.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exchanges,
    script: (...answers) => void queue.push(...answers),
    close: () =>
      new Promise<void>((resolve) => {
        for (const response of held) response.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
