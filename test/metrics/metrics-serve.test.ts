/**
 * `keyward serve` as an operator runs it: no metrics listener unless KEYWARD_METRICS_PORT is set; with
 * it, a second port that serves /metrics while the API's does not, closed on stop; a port that is
 * taken stops start-up with one line naming the variable.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliEnv, newMasterKey, runCli, startServe } from '../helpers/cli-process.js';
import { scrapeWhen } from './scrape.js';

const dirs: string[] = [];

function serveEnv(settings: Record<string, string> = {}): NodeJS.ProcessEnv {
  const dir = mkdtempSync(join(tmpdir(), 'keyward-metrics-'));
  dirs.push(dir);
  return cliEnv({ KEYWARD_DATABASE_URL: `sqlite:${join(dir, 'keyward.db')}`, KEYWARD_MASTER_KEY: newMasterKey(), KEYWARD_PORT: '0', ...settings });
}

function listeningLine(lines: string[]): Record<string, string> {
  return lines.map((line) => JSON.parse(line) as Record<string, string>).find((entry) => entry.msg === 'Keyward is listening')!;
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('keyward serve with KEYWARD_METRICS_PORT', () => {
  it('starts no metrics listener by default', async () => {
    const serve = await startServe(serveEnv());
    try {
      expect(listeningLine(serve.lines)).not.toHaveProperty('metrics');
      expect((await fetch(`${serve.address}/metrics`)).status).toBe(404);
    } finally {
      await serve.stop();
    }
  });

  it('serves /metrics on its own port, never on the API port, and closes it on stop', async () => {
    const serve = await startServe(serveEnv({ KEYWARD_METRICS_PORT: '0' }));
    let metricsUrl = '';
    try {
      metricsUrl = listeningLine(serve.lines).metrics!;
      expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      expect(new URL(metricsUrl).port).not.toBe(new URL(serve.address).port);
      const onApi = await fetch(`${serve.address}/metrics`);
      expect(onApi.status).toBe(404);
      expect(await onApi.json()).toMatchObject({ code: 'route_not_found' });
      expect((await fetch(`${serve.address}/healthz`)).status).toBe(200);
      const scraped = await scrapeWhen(new URL(metricsUrl).origin, 'keyward_http_requests_total', 2);
      expect(scraped.value('keyward_http_requests_total', { route: '/healthz', method: 'GET', status: '200' })).toBe(1);
      expect(scraped.value('keyward_http_requests_total', { route: 'unmatched', method: 'GET', status: '404' })).toBe(1);
      expect(scraped.all('keyward_sqlite_wal_bytes')).toHaveLength(1);
      expect(scraped.all('process_cpu_user_seconds_total')).toHaveLength(1);
    } finally {
      expect(await serve.stop()).toEqual({ code: 0, signal: null });
    }
    await expect(fetch(metricsUrl)).rejects.toThrow();
  });

  it('answers only its own address and the names in KEYWARD_METRICS_ALLOWED_HOSTS', async () => {
    const serve = await startServe(serveEnv({ KEYWARD_METRICS_PORT: '0', KEYWARD_METRICS_ALLOWED_HOSTS: 'scrape.internal' }));
    try {
      const { port } = new URL(listeningLine(serve.lines).metrics!);
      const statusFor = (host: string) =>
        new Promise<number>((resolve, reject) => {
          const outgoing = request({ host: '127.0.0.1', port, path: '/metrics', headers: { host }, agent: false }, (response) => {
            response.resume();
            resolve(response.statusCode!);
          });
          outgoing.on('error', reject);
          outgoing.end();
        });
      expect(await statusFor(`127.0.0.1:${port}`)).toBe(200);
      expect(await statusFor('scrape.internal:9464')).toBe(200);
      expect(await statusFor(`rebind.attacker.example:${port}`)).toBe(421);
    } finally {
      await serve.stop();
    }
  });

  it('stops start-up with one line naming KEYWARD_METRICS_PORT when its port is taken', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = holder.address() as AddressInfo;
      const run = await runCli(serveEnv({ KEYWARD_METRICS_PORT: String(port) }), ['serve']);
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(`keyward: KEYWARD_METRICS_PORT: the metrics listener cannot listen on 127.0.0.1:${port} (EADDRINUSE)\n`);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });
});
