/**
 * Errors raised before routing (issue 8 item 13): a path the router cannot decode, a path parameter
 * over its length limit, headers too large and bytes that are not HTTP. Under /v1 they are problems
 * with a contract code and an x-request-id, after the guard where a request exists; elsewhere the
 * area's plain page. None echoes the path, where a key pasted by mistake would come back.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GENERATED_REQUEST_ID, rawExchange, rawHttp } from '../helpers/auth-matrix.js';
import { ENGINES } from '../helpers/databases.js';
import { expectProblem } from '../helpers/problem-assertions.js';
import { startWithTenant, type Tenant, type TestApp } from '../helpers/test-app.js';

const PROBLEM_JSON = /^application\/problem\+json/;

describe.each(ENGINES)('errors raised before routing on %s', (engine) => {
  let t: TestApp, tenant: Tenant, h: Record<string, string>;
  beforeAll(async () => {
    ({ t, tenant, headers: h } = await startWithTenant(engine));
  });
  afterAll(() => t.close());

  /** A key pasted into the path: it must come back in no header, body or log line. */
  const planted = () => tenant.accountKey;
  const expectNoEcho = (response: { body: string; headers: Record<string, unknown> }) => {
    const seen = `${response.body}\n${JSON.stringify(response.headers)}\n${t.logs.join('\n')}`;
    expect(seen).not.toContain(planted());
    expect(seen).not.toContain(planted().slice(13));
  };

  const UNDECODABLE = [
    ['an invalid escape', (key: string) => `/v1/end-users/${key}%zz`],
    ['an overlong UTF-8 slash', (key: string) => `/v1/end-users/${key}%c0%af`],
    ['an encoded lone surrogate', (key: string) => `/v1/end-users/${key}%ED%A0%80`],
    ['a truncated escape', (key: string) => `/%761/end-users/${key}%E0%A4%A`],
    ["a parameter over the router's limit", (key: string) => `/v1/end-users/${key}${'a'.repeat(5000)}`],
  ] as const;

  describe.each(UNDECODABLE)('a /v1 path with %s', (_name, url) => {
    it.each(['GET', 'DELETE'] as const)("%s without keys is still the guard's 401, as a problem with x-request-id", async (method) => {
      const response = await t.app.inject({ method, url: url(planted()) });
      expectProblem(response, 401, 'account_key_missing');
      expect(response.headers['x-request-id']).toMatch(GENERATED_REQUEST_ID);
      expect(response.headers['www-authenticate']).toBe('Bearer realm="keyward"');
      expect(response.headers['ratelimit-policy']).toMatch(/^"default";q=\d+;w=60$/);
      expectNoEcho(response);
    });

    it("with an Origin header is the guard's 403", async () => {
      const response = await t.app.inject({ method: 'GET', url: url(planted()), headers: { ...h, origin: 'https://app.example' } });
      expectProblem(response, 403, 'browser_access_forbidden');
      expectNoEcho(response);
    });

    it.each(['GET', 'DELETE'] as const)('%s with valid keys is validation_failed on the path', async (method) => {
      const response = await t.app.inject({ method, url: url(planted()), headers: h });
      const body = expectProblem(response, 400, 'validation_failed', '/path');
      expect(body.errors).toHaveLength(1);
      expect(response.headers.ratelimit).toMatch(/^"default";r=\d+;t=\d+$/);
      expectNoEcho(response);
    });
  });

  it.each([
    ['the dashboard', '/dashboard/servers/%zz', 'Request not accepted'],
    ['a hosted form', '/connect/%c0%af', 'Something went wrong'],
    ['the OAuth callback', '/oauth/callback/%ED%A0%80', 'Something went wrong'],
  ])('an undecodable path under %s is the plain HTML page, with x-request-id', async (_name, path, title) => {
    const response = await t.app.inject({ method: 'GET', url: `${path}${planted()}` });
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers['x-frame-options']).toBe('DENY');
    expect(response.headers['x-request-id']).toMatch(GENERATED_REQUEST_ID);
    expect(response.body).toContain(title);
    expectNoEcho(response);
  });

  it("an undecodable path elsewhere is a problem, not the router's default JSON", async () => {
    const response = await t.app.inject({ method: 'GET', url: `/${planted()}%zz` });
    expectProblem(response, 400, 'validation_failed', '/path');
    expectNoEcho(response);
  });

  // Node answers these itself before any request exists: only a real socket can send them.
  describe('over a real socket', () => {
    let port: number;
    beforeAll(async () => {
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      port = (t.app.server.address() as AddressInfo).port;
    });

    const problemOf = (response: { statusCode: number; headers: Record<string, unknown>; body: string }) => {
      expect(response.statusCode, response.body).toBe(400);
      expect(response.headers['content-type']).toMatch(PROBLEM_JSON);
      expect(response.headers['x-request-id']).toMatch(GENERATED_REQUEST_ID);
      const body = JSON.parse(response.body) as { code: string; status: number; requestId: string; errors: { path: string }[] };
      expect(body.requestId).toBe(response.headers['x-request-id']);
      expect(body.status).toBe(400);
      // As every other answer: dated (RFC 9110, 6.6.1), and its log line found by the same key as any request's.
      expect(Date.parse(String(response.headers.date))).toBeGreaterThan(Date.now() - 60_000);
      const line = t.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.reqId === body.requestId);
      expect(line).toMatchObject({ msg: 'request', statusCode: 400 });
      return body;
    };

    it('headers over 16 KiB on /v1 are validation_failed on the headers, as a problem', async () => {
      const response = await rawHttp(port, `GET /v1/end-users/${planted()} HTTP/1.1`, [`X-Padding: ${'p'.repeat(20_000)}`]);
      const body = problemOf(response);
      expect(body.code).toBe('validation_failed');
      expect(body.errors).toEqual([{ path: '/headers', message: 'are too large' }]);
      expectNoEcho(response);
    });

    it('headers over 16 KiB on a page are the plain HTML page', async () => {
      const response = await rawHttp(port, `GET /dashboard/${planted()} HTTP/1.1`, [`X-Padding: ${'p'.repeat(20_000)}`]);
      expect(response.statusCode).toBe(400);
      expect(response.headers['content-type']).toMatch(/^text\/html/);
      expect(response.headers['x-request-id']).toMatch(GENERATED_REQUEST_ID);
      expect(response.headers['content-security-policy']).toMatch(/default-src 'none'/);
      expect(Date.parse(String(response.headers.date))).toBeGreaterThan(Date.now() - 60_000);
      expect(response.body).toContain('Request not accepted');
      expectNoEcho(response);
    });

    it.each([
      ['a request line that is not HTTP', () => `GARBAGE /v1/${planted()}`],
      ['a control character in the target', () => `GET /v1/end-users/${planted()}\u0001 HTTP/1.1`],
      ['a space inside the target', () => `GET /%761/${planted()} x HTTP/1.1`],
    ])('%s under /v1 is a problem with a contract code', async (_name, line) => {
      const response = await rawHttp(port, line(), []);
      expect(problemOf(response).code).toBe('validation_failed');
      expectNoEcho(response);
    });

    it('a header line without a colon is a problem too', async () => {
      const response = await rawHttp(port, 'GET /v1/end-users HTTP/1.1', [`Bad Header ${planted()}`]);
      expect(problemOf(response).code).toBe('validation_failed');
      expectNoEcho(response);
    });

    // Found by fuzzing (issue 17 item 7): Node's own answer was a bare 400, no body, no content type.
    describe('an HTTP/1.1 request without a Host header', () => {
      const withoutHost = (requestLine: string, headerLines: string[] = []) =>
        rawExchange(port, [requestLine, ...headerLines, 'Connection: close', '', ''].join('\r\n'));
      const keyLines = () => [`Authorization: Bearer ${tenant.accountKey}`, `x-service-key: ${tenant.serverKey}`];

      it('on /v1 with valid keys is validation_failed on the Host header, as a problem', async () => {
        const response = await withoutHost('GET /v1/end-users HTTP/1.1', keyLines());
        const body = problemOf(response);
        expect(body.code).toBe('validation_failed');
        expect(body.errors).toEqual([{ path: '/headers/host', message: 'is required' }]);
        expect(response.headers.ratelimit).toMatch(/^"default";r=\d+;t=\d+$/);
        expectNoEcho(response);
      });

      it("on /v1 without keys is the guard's 401 first, as for any other bad request there", async () => {
        const response = await withoutHost(`GET /v1/end-users/${planted()} HTTP/1.1`);
        expect(response.statusCode).toBe(401);
        expect(response.headers['content-type']).toMatch(PROBLEM_JSON);
        expect(JSON.parse(response.body)).toMatchObject({ code: 'account_key_missing', requestId: response.headers['x-request-id'] });
        expectNoEcho(response);
      });

      it('outside every area is a problem too', async () => {
        expect(problemOf(await withoutHost('GET /healthz HTTP/1.1')).errors).toEqual([{ path: '/headers/host', message: 'is required' }]);
      });

      it.each([
        ['the dashboard', 'POST /dashboard/sign-in HTTP/1.1', 'Request not accepted'],
        ['a hosted form', `GET /connect/${'t'.repeat(43)} HTTP/1.1`, 'Something went wrong'],
      ])('on %s is the plain HTML page', async (_name, requestLine, title) => {
        const response = await withoutHost(requestLine, requestLine.startsWith('POST') ? ['Content-Length: 0'] : []);
        expect(response.statusCode).toBe(400);
        expect(response.headers['content-type']).toMatch(/^text\/html/);
        expect(response.headers['x-request-id']).toMatch(GENERATED_REQUEST_ID);
        expect(response.headers['cache-control']).toBe('no-store');
        expect(response.body).toContain(title);
      });

      it('is refused only in HTTP/1.1: HTTP/1.0 needs no Host and is answered as usual', async () => {
        const response = await withoutHost('GET /healthz HTTP/1.0');
        expect(response.statusCode).toBe(200);
        expect(JSON.parse(response.body)).toMatchObject({ status: 'ok' });
      });
    });
  });
});
