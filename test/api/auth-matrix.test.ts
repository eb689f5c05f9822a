import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AuthFixture, createAuthFixture } from '../helpers/auth-fixture.js';
import {
  bearer,
  encodedVariants,
  expectPassed,
  expectRefusal,
  GENERATED_REQUEST_ID,
  GUARD_CASES,
  PRECEDENCE_CASES,
  rawHttp,
  secretsOf,
  send,
} from '../helpers/auth-matrix.js';
import { ENGINES } from '../helpers/databases.js';
import { connectStatic } from '../helpers/hosted-form.js';
import { appRouteTable, type MatrixRoute, matrixRoutes, type RouteRequests } from '../helpers/route-table.js';
import { keys, startTestApp, type TestApp } from '../helpers/test-app.js';

const RATE_LIMIT = 3;
const EXISTING_USER = 'u_matrix';

/** A request for each /v1 route, by the route's name in the app's route table. */
const REQUESTS: RouteRequests = {
  'POST /v1/oauth/:provider/start': { path: '/v1/oauth/github/start', body: { externalUserId: 'u_new' }, ok: { status: 201 } },
  'POST /v1/credentials/static/:providerSlug/connect': {
    path: '/v1/credentials/static/openai/connect',
    body: { externalUserId: 'u_new' },
    ok: { status: 201 },
  },
  'POST /v1/connect-sessions': { path: '/v1/connect-sessions', body: { externalUserId: 'u_new' }, ok: { status: 201 } },
  'GET /v1/end-users': { path: '/v1/end-users', ok: { status: 200 } },
  'GET /v1/end-users/:externalUserId': { path: `/v1/end-users/${EXISTING_USER}`, ok: { status: 200 } },
  'DELETE /v1/end-users/:externalUserId': { path: '/v1/end-users/nobody', ok: { status: 404, code: 'end_user_not_found' } },
  'PATCH /v1/end-users/:externalUserId': { path: `/v1/end-users/${EXISTING_USER}`, body: { displayName: 'Matrix' }, ok: { status: 200 } },
  'POST /v1/end-users/:externalUserId/verify': { path: '/v1/end-users/nobody/verify?provider=openai', ok: { status: 404, code: 'end_user_not_found' } },
  // The gateway (CONTRACT 8.1): every method, with a path and without; nobody's, so no provider is called.
  ...Object.fromEntries(
    ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].flatMap((method) => [
      [
        `${method} /v1/end-users/:externalUserId/proxy/:provider`,
        { path: '/v1/end-users/nobody/proxy/openai', ok: { status: 404, code: 'end_user_not_found' } },
      ],
      [
        `${method} /v1/end-users/:externalUserId/proxy/:provider/*`,
        { path: '/v1/end-users/nobody/proxy/openai/v1/models', ok: { status: 404, code: 'end_user_not_found' } },
      ],
    ]),
  ),
};

// The routes come from the app itself, read before the suites below are built from them.
const TABLE = await appRouteTable();
const FROM_TABLE = matrixRoutes(TABLE, REQUESTS);

const ROUTES: MatrixRoute[] = [
  ...FROM_TABLE.routes,
  // Guarded like the rest, so a caller without keys cannot probe which routes exist.
  { name: 'an unknown /v1 path', method: 'GET', path: '/v1/no-such-route', ok: { status: 404, code: 'route_not_found' } },
];

const LIST = ROUTES.find((route) => route.name === 'GET /v1/end-users')!;

describe('the routes of the matrix', () => {
  it("are every /v1 route in the app's route table, each with a request", () => {
    expect(FROM_TABLE.missing, 'a /v1 route with no request in REQUESTS').toEqual([]);
    expect(FROM_TABLE.stale, 'a request naming no /v1 route').toEqual([]);
    expect(FROM_TABLE.routes.map((r) => r.name).sort()).toEqual(Object.keys(REQUESTS).sort());
  });

  it("would report a new /v1 route without a request, and leave other areas' routes alone", () => {
    const grown = [...TABLE, { method: 'PUT', url: '/v1/end-users/:externalUserId' }, { method: 'GET', url: '/v1/webhooks' }];
    expect(matrixRoutes(grown, REQUESTS).missing).toEqual(['PUT /v1/end-users/:externalUserId', 'GET /v1/webhooks']);
    expect(TABLE.some((r) => r.url.startsWith('/dashboard'))).toBe(true);
    const withoutOne = { ...REQUESTS };
    delete withoutOne['GET /v1/end-users'];
    expect(matrixRoutes(TABLE, withoutOne).missing).toEqual(['GET /v1/end-users']);
  });
});

/**
 * Issue 8 item 4: a percent-encoded spelling of a /v1 path reached its handler without the guard.
 * Every route is run again under spellings the router decodes to it, and under paths the router sends
 * to /v1's not-found handler: a doubled slash (the router does not merge slashes), and an id holding
 * an encoded slash in either hex case (one segment, so still the id route).
 */
const SPELLED: MatrixRoute[] = [
  ...ROUTES.flatMap(encodedVariants),
  { name: 'a doubled slash: GET /v1//end-users', method: 'GET', path: '/v1//end-users', ok: { status: 404, code: 'route_not_found' } },
  { name: 'a doubled slash: GET //%761/end-users', method: 'GET', path: '/%761//end-users', ok: { status: 404, code: 'route_not_found' } },
  { name: 'DELETE /v1/end-users/no%2fbody', method: 'DELETE', path: '/v1/end-users/no%2fbody', ok: { status: 404, code: 'end_user_not_found' } },
  { name: 'DELETE /v1/end-users/no%2Fbody', method: 'DELETE', path: '/%761/end-users/no%2Fbody', ok: { status: 404, code: 'end_user_not_found' } },
];

describe.each(ENGINES)('the management guard on %s', (engine) => {
  let t: TestApp;
  let f: AuthFixture;
  beforeAll(async () => {
    t = await startTestApp(engine, { rateLimitPerMinute: RATE_LIMIT });
    f = await createAuthFixture(t, RATE_LIMIT);
    await connectStatic(t.app, keys(f.tenant), { externalUserId: EXISTING_USER, values: { apiKey: 'sk-proj-matrixmatrixmatrixmatrix' } });
  });
  afterAll(() => t.close());

  describe.each([...ROUTES, ...SPELLED])('$name', (route) => {
    it.each(GUARD_CASES)('step $step: $title', async (c) => {
      const request = c.request(f);
      expectRefusal(await send(t.app, route, request), c.step, f, secretsOf(request.headers), t.logs);
    });

    it('step 15: the account key spent its rate limit', async () => {
      const key = await f.freshAccountKey();
      const headers = { authorization: bearer(key), 'x-service-key': f.tenant.serverKey };
      for (let i = 0; i < RATE_LIMIT; i += 1) expectPassed(await send(t.app, route, { headers }), route, secretsOf(headers), t.logs);
      expectRefusal(await send(t.app, route, { headers }), 15, f, secretsOf(headers), t.logs);
      // 14 comes before 15: a spent key on a personal-mode server hears about the mode, not the limit.
      const personal = { authorization: bearer(key), 'x-service-key': f.personalServerKey };
      expectRefusal(await send(t.app, route, { headers: personal }), 14, f, secretsOf(personal), t.logs);
    });

    it.each(PRECEDENCE_CASES)('precedence: $title → step $step', async (c) => {
      const request = c.request(f);
      expectRefusal(await send(t.app, route, request), c.step, f, secretsOf(request.headers), t.logs);
    });

    it('lets a fully valid request through to the handler', async () => {
      const headers = { authorization: bearer(await f.freshAccountKey()), 'x-service-key': f.tenant.serverKey };
      expectPassed(await send(t.app, route, { headers }), route, secretsOf(headers), t.logs);
    });

    it('takes the Bearer scheme in any case', async () => {
      const headers = { authorization: `bEaReR ${await f.freshAccountKey()}`, 'x-service-key': f.tenant.serverKey };
      expectPassed(await send(t.app, route, { headers }), route, secretsOf(headers), t.logs);
    });

    it('accepts a rotated server key while its grace period runs', async () => {
      const headers = { authorization: bearer(await f.freshAccountKey()), 'x-service-key': f.inGraceServerKey };
      expectPassed(await send(t.app, route, { headers }), route, secretsOf(headers), t.logs);
    });
  });

  describe('problem details', () => {
    const route = LIST;

    it('keys_swapped says which header takes which key', async () => {
      const headers = { authorization: bearer(f.tenant.serverKey), 'x-service-key': f.tenant.accountKey };
      const response = await send(t.app, route, { headers });
      expectRefusal(response, 4, f, secretsOf(headers), t.logs);
      const { detail } = response.json() as { detail: string };
      expect(detail).toMatch(/Authorization[^,]*account API key[^,]*service_acct_/);
      expect(detail).toMatch(/x-service-key[^,]*server API key[^,]*service_srv_/);
    });

    // Issue 17 item 16: a key pasted without its scheme was told only that the key was missing.
    it.each([
      ['alone', (key: string) => key],
      ['after another scheme', (key: string) => `Token ${key}`],
      ['glued to the scheme', (key: string) => `Bearer${key}`],
    ])('account_key_missing for an account key %s says it must be sent as Authorization: Bearer service_acct_…', async (_name, value) => {
      const key = await f.freshAccountKey();
      const headers = { authorization: value(key), 'x-service-key': f.tenant.serverKey };
      const response = await send(t.app, route, { headers });
      expectRefusal(response, 3, f, [key, key.slice('service_acct_'.length), ...secretsOf(headers)], t.logs);
      const { detail } = response.json() as { detail: string };
      expect(detail).toContain('without the Bearer scheme');
      expect(detail).toContain('must be sent as Authorization: Bearer service_acct_…');
    });

    it('account_key_missing for a server key in Authorization says where each key goes', async () => {
      const headers = { authorization: f.tenant.serverKey, 'x-service-key': f.tenant.serverKey };
      const response = await send(t.app, route, { headers });
      expectRefusal(response, 3, f, secretsOf(headers), t.logs);
      const { detail } = response.json() as { detail: string };
      expect(detail).toMatch(/Authorization: Bearer service_acct_…/);
      expect(detail).toMatch(/server API key goes in x-service-key/);
    });

    it('account_key_missing without any key keeps the plain instruction', async () => {
      for (const headers of [{}, { authorization: 'Basic dXNlcjpwYXNz' }] as Record<string, string>[]) {
        const response = await send(t.app, route, { headers });
        expectRefusal(response, 3, f, [], t.logs);
        expect(response.json().detail).toBe('Send the account API key as Authorization: Bearer service_acct_….');
      }
    });

    it('a revoked key is named by its hint only', async () => {
      const headers = { authorization: bearer(f.revokedAccountKey), 'x-service-key': f.tenant.serverKey };
      const response = await send(t.app, route, { headers });
      expectRefusal(response, 9, f, secretsOf(headers), t.logs);
      expect(response.json().detail).toContain(`service_acct_…${f.revokedAccountKey.slice(-4)}`);
    });
  });

  describe('x-request-id', () => {
    const route = LIST;

    it('keeps a valid incoming id on a refusal and on a success', async () => {
      const refused = await t.app.inject({ method: 'GET', url: route.path, headers: { 'x-request-id': 'client.trace-01_A' } });
      expect(refused.statusCode).toBe(401);
      expect(refused.headers['x-request-id']).toBe('client.trace-01_A');
      expect(refused.json().requestId).toBe('client.trace-01_A');
      const headers = { authorization: bearer(await f.freshAccountKey()), 'x-service-key': f.tenant.serverKey, 'x-request-id': 'x'.repeat(128) };
      const passed = await t.app.inject({ method: 'GET', url: route.path, headers });
      expect(passed.statusCode).toBe(200);
      expect(passed.headers['x-request-id']).toBe('x'.repeat(128));
    });

    it.each(['bad id!', 'x'.repeat(129), ''])('replaces the invalid incoming id %j with a req_ id', async (given) => {
      const response = await t.app.inject({ method: 'GET', url: route.path, headers: { 'x-request-id': given, origin: 'https://app.example' } });
      expect(response.statusCode).toBe(403);
      expect(response.headers['x-request-id']).toMatch(GENERATED_REQUEST_ID);
      expect(response.json().requestId).toBe(response.headers['x-request-id']);
    });

    it('never echoes a key sent as the request id', async () => {
      const key = await f.freshAccountKey();
      const response = await t.app.inject({ method: 'GET', url: route.path, headers: { 'x-request-id': key } });
      expect(response.headers['x-request-id']).toMatch(GENERATED_REQUEST_ID);
      expect(JSON.stringify(response.headers) + response.body).not.toContain(key);
      expect(t.logs.join('\n')).not.toContain(key);
    });

    it('gives every request its own id', async () => {
      const ids = new Set<unknown>();
      for (let i = 0; i < 5; i += 1) ids.add((await t.app.inject({ method: 'GET', url: '/v1/end-users' })).headers['x-request-id']);
      expect(ids.size).toBe(5);
    });
  });

  // app.inject only simulates Node's header handling; here Node's own parser reads the repeats.
  describe('duplicate headers over a real socket', () => {
    let port: number;
    beforeAll(async () => {
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      port = (t.app.server.address() as AddressInfo).port;
    });

    it('refuses Authorization twice, though Node keeps only the first', async () => {
      const key = await f.freshAccountKey();
      const lines = [`Authorization: ${bearer(key)}`, `Authorization: ${bearer(key)}`, `x-service-key: ${f.tenant.serverKey}`];
      const response = await rawHttp(port, 'GET /v1/end-users HTTP/1.1', lines);
      expectRefusal(response, 2, f, [key, f.tenant.serverKey], t.logs);
    });

    it('refuses x-service-key twice', async () => {
      const key = await f.freshAccountKey();
      const lines = [`Authorization: ${bearer(key)}`, `x-service-key: ${f.tenant.serverKey}`, `X-Service-Key: ${f.tenant.serverKey}`];
      const response = await rawHttp(port, 'GET /v1/end-users HTTP/1.1', lines);
      expectRefusal(response, 2, f, [key, f.tenant.serverKey], t.logs);
    });

    it('passes the same request with each header once', async () => {
      const key = await f.freshAccountKey();
      const response = await rawHttp(port, 'GET /v1/end-users HTTP/1.1', [`Authorization: ${bearer(key)}`, `x-service-key: ${f.tenant.serverKey}`]);
      expectPassed(response, LIST, [key, f.tenant.serverKey], t.logs);
    });

    // app.inject resolves dot segments as a browser would; a raw client sends the target as it is.
    it.each(['/%761/end-users', '/v%31/%65nd-users', '/v1/../v1/end-users', '/v1/./end-users', '/v1//end-users'])(
      'guards %s as the client sent it',
      async (target) => {
        const refused = await rawHttp(port, `GET ${target} HTTP/1.1`, [`x-service-key: ${f.tenant.serverKey}`]);
        expectRefusal(refused, 3, f, [f.tenant.serverKey], t.logs);
        const key = await f.freshAccountKey();
        const passed = await rawHttp(port, `GET ${target} HTTP/1.1`, [`Authorization: ${bearer(key)}`, `x-service-key: ${f.tenant.serverKey}`]);
        expect(passed.statusCode).toBeLessThan(500);
        expect(passed.headers.ratelimit).toMatch(/^"default";r=\d+;t=\d+$/);
      },
    );
  });
});
