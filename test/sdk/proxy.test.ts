/**
 * The SDK's `proxy()` against a real Keyward on a socket and a stand-in provider API: the provider's
 * own Response whatever its status, bodies both ways (a stream included), the query and headers sent
 * on, and Keyward's refusals thrown as KeywardError.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Keyward, KeywardError } from '../../src/sdk/index.js';
import { CLI_ACTOR } from '../../src/services/context.js';
import { addCustomStaticProvider } from '../../src/services/providers/custom-providers.js';
import { type ApiStandIn, startApiStandIn } from '../helpers/api-stand-in.js';
import { connectStatic } from '../helpers/hosted-form.js';
import { startWithTenant, type TestApp } from '../helpers/test-app.js';

const TOKEN = 'pat_SDKPROXY0123456789abcdef';
const USER = 'auth0|a/b ü';

let t: TestApp;
let api: ApiStandIn;
let keyward: Keyward;

beforeAll(async () => {
  api = await startApiStandIn();
  const started = await startWithTenant('sqlite');
  t = started.t;
  await addCustomStaticProvider(t.ctx, {
    serverId: started.tenant.serverId,
    slug: 'tracker',
    fields: [{ name: 'token', label: 'Token', secret: true, required: true }],
    api: { apiBaseUrl: `${api.url}/rest`, auth: 'header:private-token:{token}' },
    actor: CLI_ACTOR,
  });
  await connectStatic(t.app, started.headers, { provider: 'tracker', externalUserId: USER, values: { token: TOKEN } });
  const url = await t.app.listen({ host: '127.0.0.1', port: 0 });
  keyward = new Keyward({ baseUrl: url, accountKey: started.tenant.accountKey, serverKey: started.tenant.serverKey });
}, 120_000);
afterAll(async () => {
  await t?.close();
  await api?.close();
});

describe('proxy', () => {
  it("answers the provider's Response, with its body, query and headers passed both ways", async () => {
    const response = await keyward.proxy({
      externalUserId: USER,
      provider: 'tracker',
      method: 'POST',
      path: '/projects/42/issues',
      query: { state: 'opened', page: 2, skipped: undefined },
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'from the SDK' }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('keyward-upstream')).toBe(new URL(api.url).host);
    expect(await response.json()).toEqual({ method: 'POST', target: '/rest/projects/42/issues?state=opened&page=2', bytes: 24 });
    expect(api.received[0]!.headers['private-token']).toBe(TOKEN);
    expect(api.received[0]!.body.toString()).toBe('{"title":"from the SDK"}');
  });

  it('streams a body given as a ReadableStream, and hands back a 4xx of the provider as a Response', async () => {
    api.answer = (received, res) => {
      res.writeHead(422, { 'content-type': 'text/plain' });
      res.end(`got ${received.body.byteLength}`);
    };
    const parts = ['one,', 'two,', 'three'];
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = parts.shift();
        if (next === undefined) controller.close();
        else controller.enqueue(new TextEncoder().encode(next));
      },
    });
    const response = await keyward.proxy({ externalUserId: USER, provider: 'tracker', method: 'PUT', path: 'upload', body });
    expect([response.status, await response.text()]).toEqual([422, 'got 13']);
    expect(api.received.at(-1)!.body.toString()).toBe('one,two,three');
    api.reset();
  });

  it("hands back a provider's redirect as it is, never following it with the keys", async () => {
    const elsewhere = await startApiStandIn();
    try {
      api.answer = (_r, res) => {
        res.writeHead(302, { location: `${elsewhere.url}/collect` });
        res.end();
      };
      const response = await keyward.proxy({ externalUserId: USER, provider: 'tracker', path: 'moved' });
      expect([response.status, response.headers.get('location')]).toEqual([302, `${elsewhere.url}/collect`]);
      expect(elsewhere.received).toHaveLength(0);
    } finally {
      api.reset();
      await elsewhere.close();
    }
  });

  it("throws Keyward's own refusals as KeywardError", async () => {
    const refusal = (request: Parameters<Keyward['proxy']>[0]) =>
      keyward.proxy(request).then(
        () => null,
        (error: unknown) => error,
      );
    const outside = await refusal({ externalUserId: USER, provider: 'tracker', path: 'files/a%2fb' });
    expect(outside).toBeInstanceOf(KeywardError);
    expect(outside).toMatchObject({ status: 400, code: 'proxy_target_not_allowed' });
    expect(await refusal({ externalUserId: 'nobody', provider: 'tracker', path: 'x' })).toMatchObject({ status: 404, code: 'end_user_not_found' });
    expect(await refusal({ externalUserId: USER, provider: 'openai', path: 'x' })).toMatchObject({ status: 404, code: 'credential_not_found' });
  });

  it('refuses, before sending it, a path the URL parser would rewrite into another call', async () => {
    // Sent as they are, each would arrive as something else: `../../../other` as DELETE /v1/end-users/other.
    const rewritten = ['../../../other', 'a/../b', './x', 'a/.', '%2e%2e/x', 'a/.%2E/b', 'a\\b', 'a#b/c', 'a?b', 'a\tb', 'a\nb', 'a\u0001b', 'trailing '];
    for (const path of rewritten) {
      const refused = await keyward.proxy({ externalUserId: USER, provider: 'tracker', method: 'DELETE', path }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(refused, path).toBeInstanceOf(KeywardError);
      expect(refused, path).toMatchObject({ status: null, code: 'proxy_target_not_allowed' });
    }
    expect(api.received).toHaveLength(0);
    // Dots inside a segment are a name like any other.
    const dotted = await keyward.proxy({ externalUserId: USER, provider: 'tracker', path: 'v1.2/..data/file.tar.gz' });
    expect([dotted.status, (await dotted.json()).target]).toEqual([200, '/rest/v1.2/..data/file.tar.gz']);
    api.reset();
  });

  it("sends the SDK's keys whatever the spelling of the caller's own Authorization, which never reaches the provider", async () => {
    const response = await keyward.proxy({
      externalUserId: USER,
      provider: 'tracker',
      path: 'me',
      headers: { Authorization: 'Bearer mine', 'X-Service-Key': 'not-a-key', 'X-Custom': 'kept' },
    });
    expect(response.status).toBe(200);
    await response.body?.cancel();
    const got = api.received.at(-1)!;
    expect(got.headers['x-custom']).toBe('kept');
    expect(got.headers.authorization).toBeUndefined();
    expect(got.headers['x-service-key']).toBeUndefined();
    expect(got.headers['private-token']).toBe(TOKEN);
    api.reset();
  });
});
