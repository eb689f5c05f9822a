/**
 * Every bad input of CONTRACT 2 gets its exact error code, in the problem shape, and leaves every
 * table as it was. Accepted boundary values are checked next to the refused ones, so a check that
 * refuses everything would fail too.
 */
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { allowRedirectUri } from '../../src/services/servers/servers.js';
import type { ErrorCode } from '../../src/web/problem.js';
import { ENGINES } from '../helpers/databases.js';
import { connectStatic, snapshotTables } from '../helpers/hosted-form.js';
import { expectProblem } from '../helpers/problem-assertions.js';
import { startWithTenant, type Tenant, type TestApp } from '../helpers/test-app.js';

const CONNECT = '/v1/credentials/static/openai/connect';
const ALLOWED = 'https://app.example.test/keyward/done';
const CONTROLS = ['\u0000', '\u001f', '\u007f', '\u0085', '\u009f'];
const API_KEY = 'sk-proj-abcdefghijklmnopqrstuvwxyz';
const path = (id: string) => `/v1/end-users/${encodeURIComponent(id)}`;

describe.each(ENGINES)('bad inputs on %s', (engine) => {
  let t: TestApp, tenant: Tenant, h: Record<string, string>;

  beforeAll(async () => {
    ({ t, tenant, headers: h } = await startWithTenant(engine));
    await allowRedirectUri(t.ctx, tenant.serverId, ALLOWED, CLI_ACTOR);
    for (const externalUserId of ['auth0|a/b', 'caf\u00e9', '\u{1F600}'.repeat(255)]) {
      await connectStatic(t.app, h, { externalUserId, values: { apiKey: API_KEY } });
    }
  });
  afterAll(() => t.close());

  const send = (options: InjectOptions) => t.app.inject({ ...options, headers: { ...h, ...options.headers } });
  const connect = (payload: unknown, headers: Record<string, string> = {}, url = CONNECT) =>
    send({ method: 'POST', url, headers, payload: payload as Record<string, unknown> });

  /** The request is answered with the problem, and no table changed (the key's lastUsedAt included: the clock stands still). */
  async function refused(options: InjectOptions, status: number, code: ErrorCode, errorPath?: string) {
    const before = await snapshotTables(t.ctx);
    const response = await send(options);
    expectProblem(response, status, code, errorPath);
    expect(await snapshotTables(t.ctx)).toEqual(before);
    return response;
  }
  const refusedBody = (payload: unknown, status: number, code: ErrorCode, errorPath?: string) =>
    refused({ method: 'POST', url: CONNECT, payload: payload as Record<string, unknown> }, status, code, errorPath);

  describe('externalUserId length, counted in Unicode characters', () => {
    it.each([
      ['255 ASCII', 'a'.repeat(255)],
      ['255 astral', '\u{1F680}'.repeat(255)],
      ['255 mixed', 'x'.repeat(200) + '\u{1F680}'.repeat(55)],
    ])('accepts %s characters in the body and in the path', async (_name, id) => {
      const created = await connect({ externalUserId: id });
      expect(created.statusCode, created.body).toBe(201);
      expect(created.json().externalUserId).toBe(id);
      // Past validation, the path finds no such member (the form was never completed).
      expectProblem(await send({ method: 'GET', url: path(id) }), 404, 'end_user_not_found');
    });

    it('reads back a stored 255-character astral id through the path', async () => {
      const id = '\u{1F600}'.repeat(255);
      const read = await send({ method: 'GET', url: path(id) });
      expect(read.statusCode).toBe(200);
      expect(read.json().externalUserId).toBe(id);
    });

    it.each([
      ['256 ASCII', 'a'.repeat(256)],
      ['256 astral', '\u{1F600}'.repeat(256)],
      ['254 ASCII + 2 astral', 'a'.repeat(254) + '\u{1F600}'.repeat(2)],
    ])('refuses %s characters in the body and in the path', async (_name, id) => {
      await refusedBody({ externalUserId: id }, 400, 'validation_failed', '/body/externalUserId');
      await refused({ method: 'GET', url: path(id) }, 400, 'validation_failed', '/path/externalUserId');
      await refused({ method: 'DELETE', url: path(id) }, 400, 'validation_failed', '/path/externalUserId');
    });

    it('refuses an empty externalUserId in the body', async () => {
      await refusedBody({ externalUserId: '' }, 400, 'validation_failed', '/body/externalUserId');
    });
  });

  describe('control characters', () => {
    it.each(CONTROLS.map((c) => [`U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`, c]))(
      'refuses %s in the body and in the path',
      async (_name, c) => {
        await refusedBody({ externalUserId: `a${c}b` }, 400, 'validation_failed', '/body/externalUserId');
        await refused({ method: 'GET', url: path(`a${c}b`) }, 400, 'validation_failed', '/path/externalUserId');
        await refused({ method: 'DELETE', url: path(`auth0|a/b${c}`) }, 400, 'validation_failed', '/path/externalUserId');
      },
    );

    it('accepts the characters just outside the control ranges (U+0020, U+007E, U+00A0)', async () => {
      for (const c of [' ', '~', '\u00a0']) expect((await connect({ externalUserId: `a${c}b` })).statusCode).toBe(201);
    });
  });

  // Issue 8 item 5: stored lossily, alice\ud800 and alice\udc00 became one end user on both engines.
  describe('lone UTF-16 surrogates (ill-formed text)', () => {
    const LONE = ['alice\ud800', 'alice\udc00', '\udbff', 'a\ude00b'];
    const members = async () => (await t.ctx.store.db.selectFrom('audience_members').select('external_user_id').execute()).map((r) => r.external_user_id);

    it.each(LONE.map((id) => [JSON.stringify(id), id]))('refuses %s in the body of both POST routes, storing nothing', async (_name, id) => {
      await refusedBody({ externalUserId: id }, 400, 'validation_failed', '/body/externalUserId');
      await refused({ method: 'POST', url: '/v1/oauth/github/start', payload: { externalUserId: id } }, 400, 'validation_failed', '/body/externalUserId');
    });

    it('keeps alice\ud800 and alice\udc00 apart: neither is stored, so neither can read the other', async () => {
      for (const id of ['alice\ud800', 'alice\udc00']) expect((await connect({ externalUserId: id })).statusCode).toBe(400);
      expect((await members()).filter((id) => id.startsWith('alice'))).toEqual([]);
      const listed = await send({ method: 'GET', url: '/v1/end-users?prefix=alice' });
      expect(listed.json().data).toEqual([]);
    });

    it.each([
      ['a high surrogate', 'alice%ED%A0%80'],
      ['a low surrogate', 'alice%ED%B0%80'],
      ['a lowercase-hex surrogate', '%ed%bf%bf'],
    ])('refuses %s percent-encoded in the path of GET and DELETE', async (_name, encoded) => {
      await refused({ method: 'GET', url: `/v1/end-users/${encoded}` }, 400, 'validation_failed', '/path');
      await refused({ method: 'DELETE', url: `/v1/end-users/${encoded}` }, 400, 'validation_failed', '/path');
    });

    it('refuses a percent-encoded lone surrogate in the prefix query', async () => {
      await refused({ method: 'GET', url: '/v1/end-users?prefix=alice%ED%A0%80' }, 400, 'validation_failed', '/query/prefix');
      await refused({ method: 'GET', url: '/v1/end-users?limit=1&prefix=%zz' }, 400, 'validation_failed', '/query/prefix');
    });

    it('accepts a surrogate pair (one astral character) in the body, the path and the prefix', async () => {
      const id = 'alice\ud83d\ude00';
      await connectStatic(t.app, h, { externalUserId: id, values: { apiKey: API_KEY } });
      const read = await send({ method: 'GET', url: path(id) });
      expect(read.statusCode).toBe(200);
      expect(read.json().externalUserId).toBe(id);
      const byPair = await send({ method: 'GET', url: `/v1/end-users?prefix=${encodeURIComponent(id)}` });
      expect(byPair.json().data.map((m: { externalUserId: string }) => m.externalUserId)).toEqual([id]);
    });
  });

  describe('externalUserId in a path is percent-encoded and matched exactly', () => {
    it('finds auth0|a/b sent as auth0%7Ca%2Fb (either hex case)', async () => {
      for (const url of ['/v1/end-users/auth0%7Ca%2Fb', '/v1/end-users/auth0%7ca%2fb']) {
        const read = await send({ method: 'GET', url });
        expect(read.statusCode).toBe(200);
        expect(read.json().externalUserId).toBe('auth0|a/b');
      }
    });

    it.each([
      ['another case', 'AUTH0|a/b'],
      ['a prefix', 'auth0|a'],
      ['a trailing space', 'auth0|a/b '],
      ['another Unicode normalisation', 'cafe\u0301'],
    ])('answers %s with end_user_not_found, for GET and DELETE', async (_name, id) => {
      await refused({ method: 'GET', url: path(id) }, 404, 'end_user_not_found');
      await refused({ method: 'DELETE', url: path(id) }, 404, 'end_user_not_found');
    });

    it('does not repeat the id in end_user_not_found: a key pasted into the path must not come back', async () => {
      for (const method of ['GET', 'DELETE'] as const) {
        const response = await refused({ method, url: path(tenant.accountKey) }, 404, 'end_user_not_found');
        expect(response.body).not.toContain(tenant.accountKey.slice('service_acct_'.length));
      }
    });
  });

  describe('list query', () => {
    it('refuses garbage, tampered and hand-made cursors with invalid_cursor', async () => {
      const first = await send({ method: 'GET', url: '/v1/end-users?limit=1' });
      const cursor = first.json().nextCursor as string;
      expect((await send({ method: 'GET', url: `/v1/end-users?limit=1&cursor=${encodeURIComponent(cursor)}` })).statusCode).toBe(200);
      const [payload, mac] = cursor.split('.') as [string, string];
      const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
      const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
      const bad = [
        'garbage',
        '',
        `${flip(payload, 6)}.${mac}`,
        `${payload}.${flip(mac, 3)}`,
        `${payload}.${mac}.x`,
        payload,
        b64({ createdAt: '2020-01-01T00:00:00.000Z', externalUserId: 'a' }),
        `${b64(['2020-01-01T00:00:00.000Z', 'a'])}.${mac}`,
        Buffer.from(cursor).toString('base64url'),
        // The MAC is compared in constant time over bytes: as many characters but more bytes, or
        // one character short, must be refused like any other wrong MAC (not a 500 from a length mismatch).
        `${payload}.${'\u00e9'.repeat(mac.length)}`,
        `${payload}.${mac.slice(0, -1)}`,
        `${payload}.${mac}A`,
      ];
      for (const value of bad) await refused({ method: 'GET', url: `/v1/end-users?cursor=${encodeURIComponent(value)}` }, 400, 'invalid_cursor');
    });

    it.each(['0', '101', 'abc', '-1', '1.5', ''])('refuses limit=%s with validation_failed at /query/limit', async (limit) => {
      await refused({ method: 'GET', url: `/v1/end-users?limit=${limit}` }, 400, 'validation_failed', '/query/limit');
    });

    it('accepts limit 1 and 100', async () => {
      expect((await send({ method: 'GET', url: '/v1/end-users?limit=1' })).json().data).toHaveLength(1);
      expect((await send({ method: 'GET', url: '/v1/end-users?limit=100' })).statusCode).toBe(200);
    });

    it('refuses an empty prefix and a malformed provider slug', async () => {
      await refused({ method: 'GET', url: '/v1/end-users?prefix=' }, 400, 'validation_failed', '/query/prefix');
      await refused({ method: 'GET', url: '/v1/end-users?provider=Open_AI' }, 400, 'validation_failed', '/query/provider');
    });
  });

  describe('bodies', () => {
    it('refuses a body over 64 KiB with 413 and takes one of exactly 64 KiB to validation', async () => {
      const body = (length: number) => `{"externalUserId":"${'x'.repeat(length - 21)}"}`;
      expect(body(65536)).toHaveLength(65536);
      const json = { 'content-type': 'application/json' };
      await refused({ method: 'POST', url: CONNECT, headers: json, payload: body(65536) }, 400, 'validation_failed', '/body/externalUserId');
      await refused({ method: 'POST', url: CONNECT, headers: json, payload: body(65537) }, 413, 'payload_too_large');
    });

    it.each(['{bad', '{"externalUserId":', "{'externalUserId':'u1'}", ''])('refuses %j sent as application/json with invalid_json', async (payload) => {
      await refused({ method: 'POST', url: CONNECT, headers: { 'content-type': 'application/json' }, payload }, 400, 'invalid_json');
    });

    it.each([
      ['text/plain', '{"externalUserId":"u1"}'],
      ['application/x-www-form-urlencoded', 'externalUserId=u1'],
      ['application/xml', '<externalUserId>u1</externalUserId>'],
    ])('refuses %s with 415 unsupported_media_type', async (type, payload) => {
      await refused({ method: 'POST', url: CONNECT, headers: { 'content-type': type }, payload }, 415, 'unsupported_media_type');
    });

    it.each(['extra', 'values', 'provider', 'externaluserid'])('refuses the unknown field %s at /body/<field>', async (field) => {
      await refusedBody({ externalUserId: 'u1', [field]: 'x' }, 400, 'validation_failed', `/body/${field}`);
    });

    it('does not echo a key sent as a field name', async () => {
      const response = await connect({ externalUserId: 'u1', [tenant.accountKey]: 'x' });
      expect(response.statusCode).toBe(400);
      expect(response.json().errors[0].path).toBe('/body/[redacted]');
      expect(response.body).not.toContain(tenant.accountKey.slice('service_acct_'.length));
    });

    it.each([
      ['externalUserId', 123],
      ['externalUserId', true],
      ['externalUserId', null],
      ['externalUserId', ['u1']],
      ['expiresIn', '600'],
      ['expiresIn', 600.5],
      ['redirectUri', 5],
    ])('refuses %s = %j instead of coercing it', async (field, value) => {
      const payload = field === 'externalUserId' ? { externalUserId: value } : { externalUserId: 'u1', [field]: value };
      await refusedBody(payload, 400, 'validation_failed', `/body/${field}`);
    });

    it('refuses a missing externalUserId and a body that is not an object', async () => {
      await refusedBody({}, 400, 'validation_failed', '/body/externalUserId');
      await refusedBody([{ externalUserId: 'u1' }], 400, 'validation_failed', '/body');
    });

    it.each([59, 86401, 0, -1])('refuses expiresIn %d (outside 60–86400)', async (expiresIn) => {
      await refusedBody({ externalUserId: 'u1', expiresIn }, 400, 'validation_failed', '/body/expiresIn');
    });

    it.each([60, 86400])('accepts expiresIn %d', async (expiresIn) => {
      const created = await connect({ externalUserId: 'u1', expiresIn });
      expect(created.statusCode).toBe(201);
      const { createdAt, expiresAt } = created.json() as { createdAt: string; expiresAt: string };
      expect(Date.parse(expiresAt) - Date.parse(createdAt)).toBe(expiresIn * 1000);
    });
  });

  describe('providers and redirect URIs', () => {
    it('answers each provider problem with its own code', async () => {
      const url = (slug: string) => `/v1/credentials/static/${slug}/connect`;
      const payload = { externalUserId: 'u1' };
      await refused({ method: 'POST', url: url('no-such-provider'), payload }, 404, 'provider_not_found');
      await refused({ method: 'POST', url: url('anthropic'), payload }, 422, 'provider_not_enabled');
      await refused({ method: 'POST', url: url('github'), payload }, 422, 'provider_auth_mismatch');
      await refused({ method: 'POST', url: url('OpenAI'), payload }, 400, 'validation_failed', '/path/providerSlug');
    });

    it('accepts an allowed redirectUri and refuses any other, however close', async () => {
      expect((await connect({ externalUserId: 'u1', redirectUri: ALLOWED })).statusCode).toBe(201);
      for (const redirectUri of [`${ALLOWED}/`, ALLOWED.replace('app.', 'APP.'), `${ALLOWED}?x=1`, 'https://evil.example/keyward/done']) {
        await refusedBody({ externalUserId: 'u1', redirectUri }, 400, 'redirect_uri_not_allowed');
      }
      await refusedBody({ externalUserId: 'u1', redirectUri: '' }, 400, 'validation_failed', '/body/redirectUri');
    });
  });

  describe('headers and query strings', () => {
    it.each([
      ['empty', ''],
      ['256 characters', 'k'.repeat(256)],
      ['a control character', 'key\u0001one'],
      ['a tab', 'key\tone'],
      ['a DEL', 'key\u007fone'],
      ['a non-ASCII character', 'cl\u00e9'],
    ])('refuses an Idempotency-Key that is %s', async (_name, key) => {
      await refused(
        { method: 'POST', url: CONNECT, headers: { 'idempotency-key': key }, payload: { externalUserId: 'u1' } },
        400,
        'validation_failed',
        '/headers/idempotency-key',
      );
    });

    it('accepts an Idempotency-Key of 255 printable characters', async () => {
      const key = Array.from({ length: 255 }, (_, i) => String.fromCharCode(0x20 + (i % 95))).join('');
      expect((await connect({ externalUserId: 'u1' }, { 'idempotency-key': key })).statusCode).toBe(201);
    });

    it.each([
      ['GET', '/v1/end-users?foo=1'],
      ['GET', '/v1/end-users/auth0%7Ca%2Fb?foo=1'],
      ['DELETE', '/v1/end-users/auth0%7Ca%2Fb?foo=1'],
      ['POST', `${CONNECT}?foo=1`],
    ] as const)('refuses an unknown query parameter on %s %s', async (method, url) => {
      const payload = method === 'POST' ? { externalUserId: 'u1' } : undefined;
      await refused({ method, url, payload }, 400, 'validation_failed', '/query/foo');
    });
  });

  it('never answered 500 nor logged an unhandled error', () => {
    const lines = t.logs.map((line) => JSON.parse(line) as { statusCode?: number; msg?: string });
    expect(lines.some((line) => line.statusCode === 200 || line.statusCode === 201)).toBe(true);
    expect(lines.filter((line) => (line.statusCode ?? 0) >= 500 || line.msg === 'unhandled error')).toEqual([]);
  });
});
