/**
 * How long a request may take to arrive (issue 17 item 1; README, "Slow clients"), against a real
 * `keyward serve` over real sockets: headers within 10 s, the whole request (headers and body) within
 * 30 s, noticed within a second. A client that stalls, sends nothing at all, or drips a byte every few
 * seconds is dropped at the bound, and its socket with it: hundreds of stalled uploads leave no file
 * descriptor behind. A normal request, a slow one within the bound and a kept-alive connection still work.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, newMasterKey, type ServeProcess, startServe } from '../helpers/cli-process.js';

/** The bounds the README states; a timed-out request is noticed within a second of its bound. */
const HEADERS_BOUND_MS = 10_000;
const REQUEST_BOUND_MS = 30_000;
const NOTICED_WITHIN_MS = 1_000;
/** Scheduling on a busy test machine: a close may be reported this much after the server made it. */
const SLACK_MS = 1_500;
/** Stalled uploads per path: enough that sockets left open would show plainly in the count. */
const STALLED_PER_PATH = 150;

/** A raw connection to the service: what it wrote back, and when (ms after it was opened) it was closed. */
interface Watched {
  socket: Socket;
  received: () => string;
  closed: Promise<number>;
}

/** Every connection a test opened, destroyed after it whatever happened (a failing run must not hold the stop). */
const opened: Socket[] = [];

function open(port: number, first: string): Watched {
  const started = performance.now();
  const socket = connect(port, '127.0.0.1');
  let data = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => (data += chunk));
  // A reset counts as a close: what matters is that the server let go.
  socket.on('error', () => undefined);
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(performance.now() - started)));
  socket.write(first);
  opened.push(socket);
  return { socket, received: () => data, closed };
}

/** Writes `chunk` every `ms` while the socket is open. */
function drip(watched: Watched, chunk: string, ms: number): () => void {
  const timer = setInterval(() => {
    if (!watched.socket.destroyed) watched.socket.write(chunk);
  }, ms);
  void watched.closed.then(() => clearInterval(timer));
  return () => clearInterval(timer);
}

function uploadHead(path: string, host: string): string {
  return `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 60000\r\n\r\n`;
}

function statusOf(text: string): number {
  return Number(/^HTTP\/1\.1 (\d{3}) /.exec(text)?.[1] ?? 0);
}

function openFiles(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/** Resolves once every connection has closed, or after `ms`: the test then asserts which did not. */
async function settled(connections: Watched[], ms: number): Promise<(number | null)[]> {
  const late = sleep(ms).then(() => null);
  return Promise.all(connections.map((c) => Promise.race([c.closed, late])));
}

describe('how long a request may take to arrive, on keyward serve', () => {
  let serve: ServeProcess, port: number, host: string, dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keyward-slow-'));
    serve = await startServe(cliEnv({ KEYWARD_DATABASE_URL: `sqlite:${join(dir, 'keyward.db')}`, KEYWARD_MASTER_KEY: newMasterKey(), KEYWARD_PORT: '0' }));
    const url = new URL(serve.address);
    port = Number(url.port);
    host = url.host;
  });
  afterEach(() => {
    for (const socket of opened.splice(0)) socket.destroy();
  });
  afterAll(async () => {
    await serve?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('drops stalled and dripping uploads and headers at their bounds, lets their sockets go, and keeps answering', { timeout: 90_000 }, async () => {
    const pid = serve.child.pid!;
    // Warm up (the first request loads the pages), then the figure every socket is counted against.
    expect((await fetch(`${serve.address}/healthz`)).status).toBe(200);
    const baseline = openFiles(pid);

    // The review's attack: an announced 60,000-byte body, then a byte every 3 s (never idle long)...
    const dripping = open(port, `${uploadHead('/dashboard/sign-in', host)}e`);
    drip(dripping, 'm', 3000);
    // ...headers that never end, a line every 3 s...
    const slowHeaders = open(port, `POST /connect/slow HTTP/1.1\r\nHost: ${host}\r\n`);
    drip(slowHeaders, 'X-Slow: 1\r\n', 3000);
    // ...a connection that never sends a byte...
    const silent = open(port, '');
    // ...and many uploads that stop after their headers, on the two pages the review named.
    const stalled: Watched[] = [];
    for (let i = 0; i < STALLED_PER_PATH; i += 1) {
      stalled.push(open(port, uploadHead('/dashboard/sign-in', host)));
      stalled.push(open(port, uploadHead(`/connect/${'t'.repeat(43)}${i}`, host)));
    }
    await sleep(2000);
    expect(openFiles(pid) - baseline).toBeGreaterThanOrEqual(stalled.length);

    // Meanwhile the service answers as usual: a plain request, and an upload that takes 2 s, within its bound.
    expect((await fetch(`${serve.address}/dashboard/sign-in`)).status).toBe(200);
    const body = 'apiKey=sk-test&csrf=x';
    const slowButFine = open(
      port,
      `POST /connect/unknown-token HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
    );
    for (const char of body) {
      await sleep(2000 / body.length);
      slowButFine.socket.write(char);
    }
    expect(await slowButFine.closed).toBeLessThan(HEADERS_BOUND_MS);
    // Read and answered: the hosted form's page for a token it does not know.
    expect(statusOf(slowButFine.received())).toBe(404);

    const [headersClosed, silentClosed] = await settled([slowHeaders, silent], HEADERS_BOUND_MS + NOTICED_WITHIN_MS + SLACK_MS);
    expect(headersClosed).not.toBeNull();
    expect(headersClosed!).toBeGreaterThanOrEqual(HEADERS_BOUND_MS - 100);
    expect(headersClosed!).toBeLessThanOrEqual(HEADERS_BOUND_MS + NOTICED_WITHIN_MS + SLACK_MS);
    expect(silentClosed).not.toBeNull();
    // A connection that never asked anything is closed without an answer; headers cut short get one.
    expect(silent.received()).toBe('');
    expect(statusOf(slowHeaders.received())).toBe(400);

    const uploads = await settled([dripping, ...stalled], REQUEST_BOUND_MS + NOTICED_WITHIN_MS + SLACK_MS);
    expect(uploads.filter((closedAt) => closedAt === null)).toHaveLength(0);
    // Not before the bound: a slow but honest client has the whole of it.
    expect(Math.min(...(uploads as number[]))).toBeGreaterThanOrEqual(REQUEST_BOUND_MS - 2000);
    expect(Math.max(...(uploads as number[]))).toBeLessThanOrEqual(REQUEST_BOUND_MS + NOTICED_WITHIN_MS + SLACK_MS);
    // Each was answered as its area answers a bad request: the dashboard's and the hosted form's page.
    for (const upload of [dripping, ...stalled]) {
      expect(statusOf(upload.received())).toBe(400);
      expect(upload.received()).toMatch(/\r\ncontent-type: text\/html; charset=utf-8\r\n/i);
    }
    // Every socket let go: the process holds what it held before (a few files either way for the database).
    await sleep(500);
    expect(Math.abs(openFiles(pid) - baseline)).toBeLessThanOrEqual(5);

    // A kept-alive connection still serves one request after another.
    const keptAlive = open(port, `GET /healthz HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    await sleep(300);
    keptAlive.socket.write(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    await keptAlive.closed;
    expect(keptAlive.received().match(/HTTP\/1\.1 200 OK/g)).toHaveLength(2);
  });

  it('drops a kept-alive connection whose next request stalls, counting from that request', { timeout: 30_000 }, async () => {
    const connection = open(port, `GET /healthz HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    await sleep(1000);
    const secondStarted = performance.now();
    connection.socket.write(`POST /dashboard/sign-in HTTP/1.1\r\nHost: ${host}\r\n`);
    const [closedAt] = await settled([connection], 1000 + HEADERS_BOUND_MS + NOTICED_WITHIN_MS + SLACK_MS);
    expect(closedAt).not.toBeNull();
    const afterSecond = performance.now() - secondStarted;
    expect(afterSecond).toBeGreaterThanOrEqual(HEADERS_BOUND_MS - 100);
    expect(afterSecond).toBeLessThanOrEqual(HEADERS_BOUND_MS + NOTICED_WITHIN_MS + SLACK_MS);
    expect(statusOf(connection.received())).toBe(200);
  });
});
