/**
 * The proxy (CONTRACT 8.1) with a static credential, on both engines, against a stand-in provider API
 * on 127.0.0.1 that records what it receives: every method with a body and a query; what is added and
 * what never arrives (no key, no cookie); the answer passed on with `keyward-upstream`; Keyward's own
 * refusals as problem+json without it; 3xx not followed; 500 passed on; a reset before any byte; a
 * timeout; the body limit, declared and chunked; the in-flight limit; the log line and the metrics.
 */
import { request as httpRequest } from 'node:http';
import { type AddressInfo, connect, createServer } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { catalogProvider } from '../../src/catalog/catalog.js';
import type { Provider } from '../../src/catalog/provider-definition.js';
import { CLI_ACTOR } from '../../src/services/context.js';
import { addCustomStaticProvider } from '../../src/services/providers/custom-providers.js';
import { setSecretsReadable } from '../../src/services/servers/servers.js';
import { type ApiStandIn, startApiStandIn } from '../helpers/api-stand-in.js';
import { ENGINES } from '../helpers/databases.js';
import { connectStatic } from '../helpers/hosted-form.js';
import { expectProblem } from '../helpers/problem-assertions.js';
import { startWithTenant, type Tenant, type TestApp } from '../helpers/test-app.js';

const API_KEY = 'sk_live_PROXIEDabcdefghijklmnop0123456789';
const SESSION_COOKIE = 'keyward_session=dashboard-session-value-0123456789';
const LIMITS = { maxBodyBytes: 1024 * 1024, timeoutMs: 1500, maxInFlight: 2 };

/** What marks a proxied call's log line (its request line, with the call's own fields). */
const CALL_LINE = '"proxy":{';

describe.each(ENGINES)('the proxy with a static credential on %s', (engine) => {
  let t: TestApp;
  let tenant: Tenant;
  let headers: Record<string, string>;
  let api: ApiStandIn;
  let host: string;
  /** Keyward on a real socket: the paths of these tests must reach it exactly as written (inject would normalise `..`). */
  let keyward: string;

  beforeAll(async () => {
    api = await startApiStandIn();
    host = new URL(api.url).host;
    ({ t, tenant, headers } = await startWithTenant(engine, { metrics: true, proxy: LIMITS }));
    await addCustomStaticProvider(t.ctx, {
      serverId: tenant.serverId,
      slug: 'ledger',
      name: 'Ledger',
      fields: [{ name: 'apiKey', label: 'API key', secret: true, required: true }],
      api: { apiBaseUrl: `${api.url}/base/v2`, apiHosts: [`localhost:${new URL(api.url).port}`], auth: 'bearer:apiKey' },
      actor: CLI_ACTOR,
    });
    await addCustomStaticProvider(t.ctx, {
      serverId: tenant.serverId,
      slug: 'no-api',
      fields: [{ name: 'token', label: 'Token', secret: true, required: true }],
      actor: CLI_ACTOR,
    });
    await connectStatic(t.app, headers, { provider: 'ledger', externalUserId: 'u_1', values: { apiKey: API_KEY } });
    await connectStatic(t.app, headers, { provider: 'no-api', externalUserId: 'u_1', values: { token: 'tok-0123456789' } });
    keyward = await t.app.listen({ host: '127.0.0.1', port: 0 });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await api?.close();
  });
  beforeEach(() => api.reset());

  /** A request sent as written, over a socket; a body given as chunks goes chunked (no length declared). */
  const onTheWire = (method: string, path: string, chunks?: Buffer[]) =>
    new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; json: Record<string, unknown> }>((resolve, reject) => {
      const { port } = new URL(keyward);
      const sent = httpRequest({ host: '127.0.0.1', port, method, path, headers: { ...headers, 'content-type': 'application/octet-stream' } }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (chunk: Buffer) => parts.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, json: JSON.parse(Buffer.concat(parts).toString() || '{}') }));
      });
      // Keyward may answer 413 and close before the whole body is written.
      sent.on('error', (error) =>
        (error as NodeJS.ErrnoException).code === 'EPIPE' || (error as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(error),
      );
      for (const chunk of chunks ?? []) sent.write(chunk);
      sent.end();
    });

  const proxy = (method: string, path: string, extra: { headers?: Record<string, string>; payload?: string | Buffer } = {}) =>
    t.app.inject({ method: method as 'GET', url: `/v1/end-users/u_1/proxy/${path}`, headers: { ...headers, ...extra.headers }, payload: extra.payload });

  it('calls every method with its body and query, adds the credential, and never passes on a key or a cookie', async () => {
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
      const body = method === 'GET' ? undefined : JSON.stringify({ method, note: 'héllo' });
      const answer = await proxy(method, 'ledger/charges/ch%201?limit=3&q=a%2Bb&q=c', {
        headers: {
          cookie: SESSION_COOKIE,
          'content-type': 'application/json',
          'idempotency-key': `idem-${method}`,
          'x-custom': 'kept',
          'x-forwarded-for': '10.0.0.1',
          'keyward-note': 'mine',
          forwarded: 'for=10.0.0.1',
        },
        payload: body,
      });
      expect(answer.statusCode, answer.body).toBe(200);
      expect(answer.headers['keyward-upstream']).toBe(host);
      expect(answer.headers['x-request-id']).toMatch(/^req_/);
      expect(answer.headers['x-upstream-own']).toBe('yes');
      expect(answer.headers['set-cookie']).toBeUndefined();
      expect(answer.json()).toEqual({ method, target: '/base/v2/charges/ch%201?limit=3&q=a%2Bb&q=c', bytes: body ? Buffer.byteLength(body) : 0 });
      const got = api.received.at(-1)!;
      expect(got.method).toBe(method);
      expect(got.body.toString('utf8')).toBe(body ?? '');
      expect(got.headers.authorization).toBe(`Bearer ${API_KEY}`);
      expect(got.headers['idempotency-key']).toBe(`idem-${method}`);
      expect(got.headers['x-custom']).toBe('kept');
      expect(got.headers.host).toBe(host);
      for (const gone of ['cookie', 'x-service-key', 'x-forwarded-for', 'keyward-note', 'forwarded']) expect(got.headers).not.toHaveProperty(gone);
    }
    // Every byte every request carried, scanned for the caller's keys and its session cookie.
    const everything = api.received.map((r) => `${r.target}\n${r.rawHeaders.join('\n')}\n${r.body.toString('latin1')}`).join('\n');
    for (const secret of ['service_acct_', 'service_srv_', tenant.accountKey, tenant.serverKey, 'dashboard-session-value']) {
      expect(everything).not.toContain(secret);
    }
  });

  it("records the call as the credential's use, at most once a minute", async () => {
    const lastUsed = async () => {
      const list = (await t.app.inject({ method: 'GET', url: '/v1/end-users?provider=ledger', headers })).json();
      return list.data[0].credentials.find((c: { provider: string }) => c.provider === 'ledger').lastUsedAt as string | null;
    };
    t.clock.advance(120);
    expect((await proxy('GET', 'ledger/x')).statusCode).toBe(200);
    const first = await lastUsed();
    expect(first).toBe(t.clock.now().toISOString());
    t.clock.advance(30);
    await proxy('GET', 'ledger/x');
    expect(await lastUsed()).toBe(first);
    t.clock.advance(31);
    await proxy('GET', 'ledger/x');
    expect(await lastUsed()).toBe(t.clock.now().toISOString());
  });

  it('calls the base URL itself for an empty path, and another allowed host picked with keyward-base-url', async () => {
    expect((await proxy('GET', 'ledger')).json()).toMatchObject({ target: '/base/v2/' });
    expect((await proxy('GET', 'ledger/')).json()).toMatchObject({ target: '/base/v2/' });
    const picked = await proxy('GET', 'ledger/ping', { headers: { 'keyward-base-url': `http://localhost:${new URL(api.url).port}/other` } });
    expect(picked.statusCode).toBe(200);
    expect(picked.headers['keyward-upstream']).toBe(`localhost:${new URL(api.url).port}`);
    expect(picked.json()).toMatchObject({ target: '/other/ping' });
  });

  it("refuses, as its own problem and without calling the provider, a path or base URL that leaves the provider's API", async () => {
    for (const path of [
      '..',
      'a/../b',
      '.',
      '%2e%2e/x',
      'a%2fb',
      'a%5cb',
      'a\\b',
      'a//b',
      '//evil.example/x',
      '@evil.example',
      'https:%2f%2fevil.example',
      '%c0%ae%c0%ae/x',
    ]) {
      const answer = await onTheWire('GET', `/v1/end-users/u_1/proxy/ledger/${path}`);
      expect([answer.status, answer.json.code, answer.headers['keyward-upstream']], path).toEqual([400, 'proxy_target_not_allowed', undefined]);
    }
    expectProblem(await proxy('GET', 'ledger/x', { headers: { 'keyward-base-url': 'http://evil.example/' } }), 400, 'proxy_target_not_allowed');
    expect(api.received).toHaveLength(0);
  });

  it('passes on a query as sent, even one that is not percent-encoded UTF-8: it is the provider’s', async () => {
    const answer = await proxy('GET', 'ledger/search?q=%ff&a=%zz&b=%ED%A0%80&c=caf%C3%A9');
    expect(answer.statusCode, answer.body).toBe(200);
    expect(api.received.at(-1)!.target).toBe('/base/v2/search?q=%ff&a=%zz&b=%ED%A0%80&c=caf%C3%A9');
    // Keyward's own routes still refuse it.
    expectProblem(await t.app.inject({ method: 'GET', url: '/v1/end-users?prefix=%ff', headers }), 400, 'validation_failed');
  });

  it('sends a body of any content type on with that type, one Fastify cannot parse included', async () => {
    for (const type of ['text', 'application/json, text/plain', ';;;', 'application/json charset=utf-8', 'application/vnd.api+json']) {
      const answer = await proxy('PUT', 'ledger/x', { headers: { 'content-type': type }, payload: '{"a":1}' });
      expect(answer.statusCode, `${type}: ${answer.body}`).toBe(200);
      const got = api.received.at(-1)!;
      expect([got.headers['content-type'], got.body.toString()]).toEqual([type, '{"a":1}']);
    }
  });

  it('refuses to carry a Keyward key to the provider in another header, the path or the query', async () => {
    const accountKey = tenant.accountKey;
    const encoded = encodeURIComponent(accountKey).replace('_', '%5F');
    const cases: [string, Record<string, string>, string][] = [
      ['ledger/x', { 'x-other': `token ${accountKey}` }, '/headers/x-other'],
      ['ledger/x', { 'x-note': tenant.serverKey }, '/headers/x-note'],
      [`ledger/x?k=${accountKey}`, {}, '/query'],
      [`ledger/x?k=${encoded}`, {}, '/query'],
      [`ledger/${tenant.serverKey}/x`, {}, '/path'],
      // A malformed escape beside it does not hide it: each escape is decoded alone.
      [`ledger/x?a=%zz&k=${encoded}`, {}, '/query'],
      // Nor does the base URL a caller picks.
      ['ledger/x', { 'keyward-base-url': `http://localhost:${new URL(api.url).port}/${accountKey}` }, '/headers/keyward-base-url'],
    ];
    for (const [path, extra, where] of cases) {
      const answer = await proxy('GET', path, { headers: extra });
      expectProblem(answer, 400, 'validation_failed');
      expect(answer.json().errors, where).toEqual([{ path: where, message: 'carries a Keyward key (service_acct_… or service_srv_…)' }]);
      expect(answer.body).not.toContain(accountKey);
      expect(answer.body).not.toContain(tenant.serverKey);
    }
    expect(api.received).toHaveLength(0);
    // The prefix alone is no key: a search for it goes on.
    expect((await proxy('GET', 'ledger/search?q=service_acct_')).statusCode).toBe(200);
  });

  it('refuses a target in absolute form and a keyward-base-url sent twice, which it could only guess at', async () => {
    // In absolute form the path is not where the proxied path is read from: the base URL was called.
    const absolute = await onTheWire('DELETE', `${keyward}/v1/end-users/u_1/proxy/ledger/charges/ch_1?force=true`);
    expect([absolute.status, absolute.json.code]).toEqual([400, 'proxy_target_not_allowed']);
    const own = `http://localhost:${new URL(api.url).port}/other`;
    const twice = await new Promise<{ status: number; code: unknown }>((resolve, reject) => {
      const { port } = new URL(keyward);
      // Node's client sends an array's values as one line each.
      httpRequest({ host: '127.0.0.1', port, path: '/v1/end-users/u_1/proxy/ledger/x', headers: { ...headers, 'keyward-base-url': [own, own] } }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (chunk: Buffer) => parts.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode!, code: JSON.parse(Buffer.concat(parts).toString()).code }));
      })
        .on('error', reject)
        .end();
    });
    expect(twice).toEqual({ status: 400, code: 'proxy_target_not_allowed' });
    expect(api.received).toHaveLength(0);
    // Once, the same value is taken.
    expect((await proxy('GET', 'ledger/x', { headers: { 'keyward-base-url': own } })).statusCode).toBe(200);
  });

  it('passes on an answer without a content type, and a 304 or 204 (a length on it or not), with the headers the provider gave and no others', async () => {
    api.answer = (_r, res) => {
      res.writeHead(200, { 'content-length': '2' });
      res.end('ok');
    };
    const untyped = await proxy('GET', 'ledger/x');
    expect([untyped.statusCode, untyped.body, untyped.headers['content-type'], untyped.headers['content-length']]).toEqual([200, 'ok', undefined, '2']);
    api.answer = (_r, res) => {
      res.writeHead(304, { etag: '"v1"' });
      res.end();
    };
    const unchanged = await proxy('GET', 'ledger/x', { headers: { 'if-none-match': '"v1"' } });
    expect([unchanged.statusCode, unchanged.headers.etag, unchanged.headers['content-type'], unchanged.headers['content-length']]).toEqual([
      304,
      '"v1"',
      undefined,
      undefined,
    ]);
    // A 304 may say the length a 200 would have had (RFC 9110 §8.6), and a 204 can carry a length too:
    // neither has content, so none is waited for. The 304's length goes on; a 204 must not have one (§8.6).
    for (const [status, length] of [
      [304, '1234'],
      [204, undefined],
    ] as const) {
      api.answer = (_r, res) => {
        res.writeHead(status, { etag: '"v2"', 'content-length': '1234' });
        res.end();
      };
      const empty = await proxy('GET', 'ledger/x', { headers: { 'if-none-match': '"v2"' } });
      expect([empty.statusCode, empty.headers.etag, empty.headers['content-length'], empty.body]).toEqual([status, '"v2"', length, '']);
    }
    // A typed answer that came whole keeps its type and its length.
    api.answer = (_r, res) => {
      res.writeHead(201, { 'content-type': 'application/json', 'content-length': '11' });
      res.end('{"id":"c1"}');
    };
    const typed = await proxy('POST', 'ledger/x', { payload: '{}', headers: { 'content-type': 'application/json' } });
    expect([typed.statusCode, typed.body, typed.headers['content-type'], typed.headers['content-length']]).toEqual([
      201,
      '{"id":"c1"}',
      'application/json',
      '11',
    ]);
  });

  it('answers 502 for a provider status HTTP does not have, and closes that answer', async () => {
    api.answer = (_r, res) => {
      res.writeHead(999, { 'content-type': 'text/plain' });
      // Never ended: the answer must be closed by Keyward, not left to its idle bound.
      res.write('partial');
    };
    expectProblem(await proxy('GET', 'ledger/x'), 502, 'provider_unavailable');
    await until(() => api.open === 0);
  });

  it('answers its own refusals: no such member, no credential of the provider, a provider without an API', async () => {
    expectProblem(await t.app.inject({ method: 'GET', url: '/v1/end-users/nobody/proxy/ledger/x', headers }), 404, 'end_user_not_found');
    expectProblem(await proxy('GET', 'openai/v1/models'), 404, 'credential_not_found');
    expectProblem(await proxy('GET', 'no-api/x'), 422, 'proxy_not_supported');
    expectProblem(
      await t.app.inject({ method: 'GET', url: '/v1/end-users/u_1/proxy/ledger/x', headers: { authorization: headers.authorization! } }),
      401,
      'service_key_missing',
    );
    expect(api.received).toHaveLength(0);
  });

  it("passes on the provider's 500 and its 3xx (not followed), with keyward-upstream", async () => {
    api.answer = (_r, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('upstream broke');
    };
    const failed = await proxy('GET', 'ledger/x');
    expect([failed.statusCode, failed.body, failed.headers['keyward-upstream']]).toEqual([500, 'upstream broke', host]);
    api.answer = (_r, res) => {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data' });
      res.end();
    };
    const moved = await proxy('GET', 'ledger/x');
    expect([moved.statusCode, moved.headers.location, moved.headers['keyward-upstream']]).toEqual([302, 'http://169.254.169.254/latest/meta-data', host]);
    expect(api.received).toHaveLength(2);
  });

  it('answers 502 for a provider that breaks off before any byte, and 504 for one that does not answer in time', async () => {
    api.answer = (_r, _res, req) => {
      req.socket.destroy();
    };
    expectProblem(await proxy('GET', 'ledger/x'), 502, 'provider_unavailable');
    api.answer = (_r, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.flushHeaders();
      setTimeout(() => res.socket?.destroy(), 20);
    };
    const cut = await proxy('GET', 'ledger/x');
    expectProblem(cut, 502, 'provider_unavailable');
    expect(cut.headers['keyward-upstream']).toBeUndefined();
    api.answer = () => undefined;
    const started = Date.now();
    expectProblem(await proxy('GET', 'ledger/slow'), 504, 'provider_timeout');
    expect(Date.now() - started).toBeGreaterThanOrEqual(LIMITS.timeoutMs - 50);
  });

  it('passes an event stream on as it comes: the first event before the provider sends the next', async () => {
    let sendRest: () => void = () => undefined;
    api.answer = (_r, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n');
      sendRest = () => res.end('data: last\n\n');
    };
    const { port } = new URL(keyward);
    const events: string[] = [];
    const done = new Promise<void>((resolve) => {
      httpRequest({ host: '127.0.0.1', port, path: '/v1/end-users/u_1/proxy/ledger/stream', headers }, (res) => {
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          events.push(chunk);
          // Only once the first event arrived does the provider send the last.
          if (events.length === 1) sendRest();
        });
        res.on('end', resolve);
      }).end();
    });
    await done;
    expect(events.join('')).toBe('data: first\n\ndata: last\n\n');
    expect(events[0]).toBe('data: first\n\n');
  });

  it("ends the caller's answer short when the provider breaks off after its first 64 KiB, already passed on", async () => {
    api.answer = (_r, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(1024 * 1024) });
      res.write(Buffer.alloc(256 * 1024, 'z'), () => setTimeout(() => res.socket?.destroy(), 50));
    };
    const outcome = await new Promise<{ status: number; bytes: number; aborted: boolean }>((resolve) => {
      const { port } = new URL(keyward);
      httpRequest({ host: '127.0.0.1', port, path: '/v1/end-users/u_1/proxy/ledger/big', headers }, (res) => {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.byteLength;
        });
        res.on('error', () => undefined);
        res.on('close', () => resolve({ status: res.statusCode!, bytes, aborted: !res.complete }));
      }).end();
    });
    expect(outcome.status).toBe(200);
    expect(outcome.aborted).toBe(true);
    expect(outcome.bytes).toBeGreaterThan(64 * 1024);
    expect(outcome.bytes).toBeLessThan(1024 * 1024);
  });

  /** A request's head as written on a socket, with the tenant's keys. */
  const head = (method: string, path: string, extra: Record<string, string>) => {
    const lines = Object.entries({ ...headers, host: new URL(keyward).host, ...extra }).map(([name, value]) => `${name}: ${value}`);
    return `${method} ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`;
  };

  /** A connection to Keyward written by hand: what it has received so far, and the errors it met. */
  const byHand = () => {
    const socket = connect({ host: '127.0.0.1', port: Number(new URL(keyward).port) });
    const conn = { socket, received: '', errors: [] as string[] };
    socket.on('error', (error: NodeJS.ErrnoException) => conn.errors.push(error.code ?? error.message));
    socket.on('data', (chunk: Buffer) => {
      conn.received += chunk.toString('latin1');
    });
    return conn;
  };

  /** The connection, its body ended, answers a proxied GET of `path` with a 200, having met no error. */
  const answersTheNext = async (conn: ReturnType<typeof byHand>, path: string) => {
    conn.received = '';
    conn.socket.write(head('GET', `/v1/end-users/u_1/proxy/ledger/${path}`, {}));
    await until(() => conn.received.includes('"target"'));
    expect(conn.received).toMatch(/^HTTP\/1\.1 200 /);
    expect(conn.errors).toEqual([]);
    conn.socket.destroy();
  };

  it('gets its 413 to a caller still sending the refused body, reads the rest only to throw it away, and keeps the connection', async () => {
    // Closed with the body unread, the connection was reset under a caller still writing, whose fetch
    // then lost the 413 for a network error (EPIPE).
    const conn = byHand();
    const { socket } = conn;
    const bodyBytes = LIMITS.maxBodyBytes + 8 * 1024 * 1024;
    socket.write(head('POST', '/v1/end-users/u_1/proxy/ledger/upload', { 'content-length': String(bodyBytes), 'content-type': 'application/octet-stream' }));
    await until(() => conn.received.includes('payload_too_large'));
    // Still writing after the 413, as a client that sends its body before reading does.
    const chunk = Buffer.alloc(256 * 1024, 'd');
    for (let sent = 0; sent < bodyBytes; sent += chunk.byteLength) {
      const piece = chunk.subarray(0, Math.min(chunk.byteLength, bodyBytes - sent));
      if (!socket.write(piece)) await new Promise((resolve) => socket.once('drain', resolve));
    }
    // The body ended: the same connection answers the next request.
    await answersTheNext(conn, 'after');
    expect(api.received.map((r) => r.target)).toEqual(['/base/v2/after']);
  });

  it('drains a body the provider will not get after it failed mid-upload, and keeps the connection', async () => {
    // A provider that resets the connection at the first bytes it receives.
    const resetting = createServer((socket) => socket.once('data', () => socket.destroy()));
    await new Promise<void>((resolve) => resetting.listen(0, '127.0.0.1', resolve));
    try {
      await addCustomStaticProvider(t.ctx, {
        serverId: tenant.serverId,
        slug: 'resetting',
        fields: [{ name: 'apiKey', label: 'API key', secret: true, required: true }],
        api: { apiBaseUrl: `http://127.0.0.1:${(resetting.address() as AddressInfo).port}`, auth: 'bearer:apiKey' },
        actor: CLI_ACTOR,
      });
      await connectStatic(t.app, headers, { provider: 'resetting', externalUserId: 'u_1', values: { apiKey: API_KEY } });
      const conn = byHand();
      const chunk = (bytes: number) => `${bytes.toString(16)}\r\n${'e'.repeat(bytes)}\r\n`;
      conn.socket.write(head('POST', '/v1/end-users/u_1/proxy/resetting/upload', { 'transfer-encoding': 'chunked', 'content-type': 'text/plain' }));
      conn.socket.write(chunk(16 * 1024));
      await until(() => conn.received.includes('provider_unavailable'));
      expect(conn.received).toMatch(/^HTTP\/1\.1 502 /);
      // Still sending after the 502, then the body ends: the same connection answers the next request.
      for (let i = 0; i < 8; i++) conn.socket.write(chunk(16 * 1024));
      conn.socket.write('0\r\n\r\n');
      await answersTheNext(conn, 'after-reset');
    } finally {
      resetting.close();
    }
  });

  it('closes the connection of a refused body that does not end within 5 s of the 413', { timeout: 20_000 }, async () => {
    const conn = byHand();
    conn.socket.write(head('POST', '/v1/end-users/u_1/proxy/ledger/upload', { 'content-length': String(LIMITS.maxBodyBytes + 1) }));
    conn.socket.write(Buffer.alloc(64 * 1024, 'c'));
    const closedAfter = await new Promise<number>((resolve) => {
      const started = Date.now();
      conn.socket.once('close', () => resolve(Date.now() - started));
    });
    expect(conn.received).toMatch(/^HTTP\/1\.1 413 /);
    expect(conn.received).toContain('payload_too_large');
    expect(closedAfter).toBeGreaterThanOrEqual(4_000);
    expect(closedAfter).toBeLessThan(15_000);
  });

  it('refuses a body over the limit, declared or found while streaming, and aborts the provider’s request', async () => {
    const big = Buffer.alloc(LIMITS.maxBodyBytes + 1, 'a');
    const declared = await proxy('POST', 'ledger/upload', { headers: { 'content-type': 'application/octet-stream' }, payload: big });
    expectProblem(declared, 413, 'payload_too_large');
    expect(api.received).toHaveLength(0);
    const chunks = Array.from({ length: 40 }, () => Buffer.alloc(32 * 1024, 'b'));
    const chunked = await onTheWire('POST', '/v1/end-users/u_1/proxy/ledger/upload', chunks);
    expect([chunked.status, chunked.json.code]).toEqual([413, 'payload_too_large']);
    // The provider's request was sent as it came, and cut off past the limit.
    await until(() => api.open === 0);
    const cut = api.received.at(-1)!;
    expect([cut.headers['transfer-encoding'], cut.aborted]).toEqual(['chunked', true]);
    expect(cut.body.byteLength).toBeLessThanOrEqual(LIMITS.maxBodyBytes);
  });

  it('answers 503 proxy_busy with Retry-After past the calls in flight a node allows', async () => {
    const held: (() => void)[] = [];
    api.answer = (_r, res) => {
      held.push(() => res.end('{}'));
    };
    const first = [proxy('GET', 'ledger/a'), proxy('GET', 'ledger/b')];
    await until(() => api.open === 2);
    t.logs.length = 0;
    const busy = await proxy('GET', 'ledger/c');
    expectProblem(busy, 503, 'proxy_busy');
    expect(busy.headers['retry-after']).toBe('1');
    // Logged as a call, as every other.
    const busyLine = JSON.parse(t.logs.find((line) => line.includes(CALL_LINE))!);
    expect([busyLine.reqId, busyLine.statusCode]).toEqual([busy.headers['x-request-id'], 503]);
    for (const release of held) release();
    expect((await Promise.all(first)).map((r) => r.statusCode)).toEqual([200, 200]);
    api.reset();
    expect((await proxy('GET', 'ledger/d')).statusCode).toBe(200);
  });

  it('logs a call whose caller went away before any answer as aborted, without a status and without an error', async () => {
    let answerLater: () => void = () => undefined;
    api.answer = (_r, res) =>
      new Promise<void>((resolve) => {
        answerLater = () => {
          res.writeHead(200).end('late');
          resolve();
        };
      });
    t.logs.length = 0;
    const { port } = new URL(keyward);
    const sent = httpRequest({ host: '127.0.0.1', port, path: '/v1/end-users/u_1/proxy/ledger/slow', headers });
    sent.on('error', () => undefined);
    sent.end();
    await until(() => api.open === 1);
    sent.destroy();
    await until(() => t.logs.some((line) => line.includes(CALL_LINE)));
    answerLater();
    const line = JSON.parse(t.logs.find((l) => l.includes(CALL_LINE))!);
    expect(line).toMatchObject({ statusCode: null, proxy: { provider: 'ledger', aborted: true } });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(t.logs.filter((l) => JSON.parse(l).level >= 50)).toEqual([]);
    api.reset();
  });

  it('works for a write-only server, whose read withholds the secret', async () => {
    await setSecretsReadable(t.ctx, tenant.serverId, false, CLI_ACTOR);
    try {
      const read = await t.app.inject({ method: 'GET', url: '/v1/end-users/u_1', headers });
      expect(read.body).not.toContain(API_KEY);
      const answer = await proxy('GET', 'ledger/x');
      expect(answer.statusCode).toBe(200);
      expect(api.received.at(-1)!.headers.authorization).toBe(`Bearer ${API_KEY}`);
    } finally {
      await setSecretsReadable(t.ctx, tenant.serverId, true, CLI_ACTOR);
    }
  });

  it('writes one log line a call, its request line, without its query, headers or body, and counts it in the metrics', async () => {
    t.logs.length = 0;
    expectProblem(await proxy('GET', 'no-api/x'), 422, 'proxy_not_supported');
    await proxy('POST', 'ledger/x?secret_query=Q123', { headers: { 'content-type': 'text/plain' }, payload: 'body-text-456' });
    const lines = t.logs.filter((line) => line.includes(CALL_LINE));
    expect(lines).toHaveLength(2);
    const line = JSON.parse(lines[1]!);
    expect(line).toMatchObject({ msg: 'request', method: 'POST', route: '/v1/end-users/:externalUserId/proxy/:provider/*', statusCode: 200 });
    expect(line.proxy).toMatchObject({ provider: 'ledger', upstream: host, bytesIn: 13 });
    expect(line.ms).toBeTypeOf('number');
    // The request's one line: no other line names its id.
    expect(line.reqId).toMatch(/^req_/);
    expect(t.logs.filter((other) => JSON.parse(other).reqId === line.reqId)).toHaveLength(1);
    // Calls refused before the handler (by the guard, by a path parameter) have the request line every request has.
    const refusals = [
      await proxy('GET', 'ledger/x', { headers: { 'x-service-key': `service_srv_${'0'.repeat(64)}` } }),
      await proxy('GET', 'Not%20a%20slug/x'),
    ];
    expect(refusals.map((r) => r.statusCode)).toEqual([401, 400]);
    for (const refused of refusals) {
      const refusedLines = t.logs.map((other) => JSON.parse(other)).filter((other) => other.reqId === refused.headers['x-request-id']);
      expect(refusedLines).toHaveLength(1);
      expect(refusedLines[0]).toMatchObject({ msg: 'request', statusCode: refused.statusCode, route: '/v1/end-users/:externalUserId/proxy/:provider/*' });
      expect(refusedLines[0].proxy).toBeUndefined();
    }
    for (const secret of ['Q123', 'body-text-456', API_KEY, tenant.accountKey, tenant.serverKey]) expect(t.logs.join('\n')).not.toContain(secret);
    const text = await t.metrics!.text();
    expect(text).toMatch(/keyward_proxy_requests_total\{provider="custom",status_class="2xx"\} [1-9]/);
    expect(text).toMatch(/keyward_proxy_requests_total\{provider="custom",status_class="4xx"\} [1-9]/);
    expect(text).toContain('keyward_proxy_request_duration_seconds_bucket');
    expect(text).not.toContain('ledger');
  });
});

describe.each(ENGINES)('the proxy under the strict address policy on %s', (engine) => {
  it('refuses, per call and pinned, a provider name that resolves to a private address: 502, nothing sent', async () => {
    const api = await startApiStandIn();
    const openai = catalogProvider('openai')!;
    // The catalog's OpenAI, its API at a public-looking name that resolves to the stand-in on 127.0.0.1.
    const standIn = { ...openai, api: { ...openai.api!, apiBaseUrl: `https://api.stand-in.example:${new URL(api.url).port}` } } as Provider;
    const { t, headers } = await startWithTenant(engine, {
      allowPrivateUrls: false,
      catalog: (slug) => (slug === 'openai' ? standIn : catalogProvider(slug)),
      resolve: async () => [{ address: '127.0.0.1', family: 4 }],
    });
    try {
      await connectStatic(t.app, headers, { externalUserId: 'u_strict', values: { apiKey: 'sk-proj-STRICTabcdefghijklmnopqrstuvwx' } });
      const answer = await t.app.inject({ method: 'GET', url: '/v1/end-users/u_strict/proxy/openai/v1/models', headers });
      expectProblem(answer, 502, 'provider_unavailable');
      // Refused by the pinned lookup, not a failed connection: the detail says so, without the address.
      expect(answer.json().detail).toBe('The provider could not be reached: its address is not allowed.');
      expect(api.received).toHaveLength(0);
    } finally {
      await t.close();
      await api.close();
    }
  });
});

async function until(done: () => boolean, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
