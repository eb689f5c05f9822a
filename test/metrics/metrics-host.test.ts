/**
 * The metrics listener answers only a Host that names it (issue 17 item 6): a page a local browser
 * opened could otherwise point a name of its own at 127.0.0.1 (DNS rebinding) and read the series.
 * Real listeners on real ports, requests with the Host a browser or a scraper would send.
 */
import { request } from 'node:http';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MetricsServer, startMetricsServer } from '../../src/metrics/metrics-server.js';
import { rawExchange } from '../helpers/auth-matrix.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

interface Scraped {
  status: number;
  type: string | undefined;
  body: string;
}

/** One request to `server` with `host` as the Host header (null: none at all). */
function ask(server: MetricsServer, host: string | null, options: { path?: string; method?: string } = {}): Promise<Scraped> {
  const { hostname, port } = new URL(server.address);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: hostname.replace(/^\[|\]$/g, ''),
        port,
        path: options.path ?? '/metrics',
        method: options.method ?? 'GET',
        headers: host === null ? {} : { host },
        setHost: host !== null,
        agent: false,
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, type: response.headers['content-type'], body }));
      },
    );
    outgoing.on('error', reject);
    outgoing.end();
  });
}

/** Nothing of the series: no sample, no HELP line, no metric name. */
function expectNothingOfTheMetrics(scraped: Scraped) {
  expect(scraped.body).not.toMatch(/# (HELP|TYPE)|process_|nodejs_|keyward_/);
  expect(scraped.body.length).toBeLessThan(200);
}

function expectMisdirected(scraped: Scraped) {
  expect(scraped.status).toBe(421);
  expect(scraped.type).toBe('text/plain; charset=utf-8');
  expect(scraped.body).toContain('KEYWARD_METRICS_ALLOWED_HOSTS');
  expectNothingOfTheMetrics(scraped);
}

describe('the Host a metrics request may name', () => {
  let t: TestApp;
  const listeners: MetricsServer[] = [];
  const listen = async (host: string, allowedHosts?: string[]) => {
    const server = await startMetricsServer(t.metrics!, { host, port: 0, ...(allowedHosts ? { allowedHosts } : {}) });
    listeners.push(server);
    return server;
  };
  beforeAll(async () => {
    t = await startTestApp('sqlite', { metrics: true });
  });
  afterAll(async () => {
    for (const server of listeners) await server.close();
    await t.close();
  });

  describe('on a listener bound to 127.0.0.1', () => {
    let server: MetricsServer, port: string;
    beforeAll(async () => {
      server = await listen('127.0.0.1');
      port = new URL(server.address).port;
    });

    it.each(['127.0.0.1:PORT', '127.0.0.1', 'localhost:PORT', 'LocalHost.:PORT', '[::ffff:127.0.0.1]:PORT'])('answers %s', async (host) => {
      const scraped = await ask(server, host.replace('PORT', port));
      expect(scraped.status).toBe(200);
      expect(scraped.body).toContain('process_cpu_user_seconds_total');
    });

    it.each([
      ['a name a page controls (DNS rebinding)', 'rebind.attacker.example:PORT'],
      ['a name that spells the address', '127.0.0.1.nip.io:PORT'],
      ['another loopback address', '127.0.0.2:PORT'],
      ['IPv6 loopback, which this listener is not on', '[::1]:PORT'],
      ['another machine', '192.0.2.10:PORT'],
      ['a value that is no host', 'a b'],
    ])('refuses %s with 421 and nothing of the metrics', async (_what, host) => {
      expectMisdirected(await ask(server, host.replace('PORT', port)));
    });

    it('refuses before anything else: another path or method learns nothing either', async () => {
      expectMisdirected(await ask(server, 'rebind.attacker.example', { path: '/nowhere' }));
      expectMisdirected(await ask(server, 'rebind.attacker.example', { method: 'POST' }));
      const head = await ask(server, 'rebind.attacker.example', { method: 'HEAD' });
      expect({ status: head.status, body: head.body }).toEqual({ status: 421, body: '' });
    });

    it('refuses an empty Host (sent as it is, on a raw socket)', async () => {
      const answer = await rawExchange(Number(port), 'GET /metrics HTTP/1.1\r\nHost:\r\nConnection: close\r\n\r\n');
      expectMisdirected({ status: answer.statusCode, type: String(answer.headers['content-type']), body: answer.body });
    });

    it('answers a request without Host with 400 and a short text, not a bare 400', async () => {
      const scraped = await ask(server, null);
      expect(scraped.status).toBe(400);
      expect(scraped.type).toBe('text/plain; charset=utf-8');
      expect(scraped.body).toBe('Bad request: send a Host header\n');
    });
  });

  it('answers a name listed in KEYWARD_METRICS_ALLOWED_HOSTS, in any case, and still refuses others', async () => {
    const server = await listen('127.0.0.1', ['scrape.internal', '10.1.2.3']);
    for (const host of ['scrape.internal:9464', 'SCRAPE.Internal', '10.1.2.3:9464', '127.0.0.1']) expect((await ask(server, host)).status).toBe(200);
    for (const host of ['x.scrape.internal', 'scrape.internal.attacker.example', 'rebind.attacker.example']) expectMisdirected(await ask(server, host));
  });

  it("on a listener bound to every address, answers this machine's addresses and localhost only", async () => {
    const server = await listen('0.0.0.0');
    const { port } = new URL(server.address);
    const own = Object.values(networkInterfaces())
      .flat()
      .filter((entry) => entry?.family === 'IPv4')
      .map((entry) => entry!.address);
    expect(own).toContain('127.0.0.1');
    for (const address of own) expect((await ask(server, `${address}:${port}`)).status, address).toBe(200);
    expect((await ask(server, `localhost:${port}`)).status).toBe(200);
    expectMisdirected(await ask(server, `192.0.2.10:${port}`));
    expectMisdirected(await ask(server, `rebind.attacker.example:${port}`));
  });
});
