/**
 * What every fuzzed exchange must show, whatever came in: no 5xx, every problem a known code with its
 * x-request-id, /v1 errors as problems, an x-request-id on every response, and no error, header or log
 * line echoing the planted key (the fuzz first found end_user_not_found repeating a key pasted into the
 * path). Each fuzz file records its exchanges here and checks them at its end.
 */
import type { FastifyInstance, InjectOptions } from 'fastify';
import { expect } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { enableProvider } from '../../src/services/providers/server-providers.js';
import { ERRORS } from '../../src/web/problem.js';
import { startWithTenant, type Tenant, type TestApp } from '../helpers/test-app.js';

export interface Exchange {
  /** The request, for a failure to name it. */
  request: string;
  method: string;
  /** What the router saw (inject resolves dot segments as a browser would); null for raw bytes. */
  path: string | null;
  response: { statusCode: number; headers: Record<string, unknown>; body: string };
}

const describeRequest = (options: InjectOptions) =>
  JSON.stringify({ method: options.method, url: options.url, headers: options.headers, payload: String(options.payload ?? '').slice(0, 300) });

export interface FuzzTenant {
  t: TestApp;
  tenant: Tenant;
  /** The tenant's account and server keys as request headers. */
  headers: Record<string, string>;
  /** The key no answer or log line may repeat: the account key, which the fuzz also pastes into requests. */
  planted: string;
}

/**
 * The app every fuzz runs against: SQLite (the fuzz checks the HTTP layers, not storage), an account
 * and server with GitHub enabled, and a refresh cooldown so repeated reads do not all call a provider.
 */
export async function startFuzzTenant(): Promise<FuzzTenant> {
  const { t, tenant, headers } = await startWithTenant('sqlite', { refreshCooldownSeconds: 30 });
  await enableProvider(t.ctx, { serverId: tenant.serverId, slug: 'github', clientId: 'fuzz-client', clientSecret: 'fuzz-client-secret', actor: CLI_ACTOR });
  return { t, tenant, headers, planted: tenant.accountKey };
}

/** Sends over app.inject and keeps the exchange. */
export function recorder(app: () => FastifyInstance) {
  const seen: Exchange[] = [];
  async function send(options: InjectOptions) {
    const response = await app().inject(options);
    seen.push({ request: describeRequest(options), method: String(options.method), path: new URL(String(options.url), 'http://x').pathname, response });
    return response;
  }
  return { seen, send };
}

/** Checks every exchange; returns how many answered a problem+json body. */
export function expectNoHarm(seen: readonly Exchange[], planted: string, logs: readonly string[]): number {
  const codes = new Set(Object.keys(ERRORS));
  const hex = planted.slice('service_acct_'.length);
  let problems = 0;
  for (const { request, method, path, response } of seen) {
    const headers = response.headers;
    expect(response.statusCode, request).toBeLessThan(500);
    expect(response.statusCode, request).toBeGreaterThanOrEqual(200);
    expect(headers['x-request-id'], request).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
    // A success may show the caller's own data as stored (an externalUserId, a label that holds the
    // key by mistake); an error and a header never repeat what the request carried.
    const text = response.statusCode >= 400 ? `${response.body}\n${JSON.stringify(headers)}` : JSON.stringify(headers);
    expect(text.includes(hex), request).toBe(false);
    if (String(headers['content-type'] ?? '').startsWith('application/problem+json') && response.body) {
      const body = JSON.parse(response.body) as { code: string; requestId: string; status: number };
      expect(codes.has(body.code), request).toBe(true);
      expect(body.requestId, request).toBe(headers['x-request-id']);
      expect(body.status, request).toBe(response.statusCode);
      problems += 1;
    }
    const v1 = path !== null && /^\/(?:v1|%761|v%31|%76%31)(?:\/|$)/.test(path);
    if (v1 && response.statusCode >= 400 && method !== 'HEAD') {
      expect(headers['content-type'], request).toMatch(/^application\/problem\+json/);
    }
  }
  const log = logs.join('\n');
  expect(log).not.toContain(hex);
  expect(logs.filter((line) => line.includes('"unhandled error"'))).toEqual([]);
  return problems;
}
