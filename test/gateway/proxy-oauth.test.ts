/**
 * The proxy with OAuth credentials (CONTRACT 8.1) from the real oidc-provider flow, on both engines and
 * three nodes sharing the database: the bearer token added; refreshed first when it expires within
 * 60 s; an upstream 401 answered by one refresh and one repeat of the call (same body), once for all
 * three nodes and never again within the cooldown, the provider's 401 then passed on as it is; and a
 * revoked credential refused at the next request on every node.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ApiStandIn, startApiStandIn } from '../helpers/api-stand-in.js';
import { ENGINES } from '../helpers/databases.js';
import { storedCredential } from '../helpers/oauth-credentials.js';
import { type OAuthTenant, PROVIDER, startOAuthTenant } from '../helpers/oauth-tenant.js';
import { expectProblem } from '../helpers/problem-assertions.js';
import { type SecondNode, startSecondNode } from '../helpers/test-app.js';

const TTL_SECONDS = 3600;

describe.each(ENGINES)('the proxy with an OAuth credential on %s', (engine) => {
  let o: OAuthTenant;
  let api: ApiStandIn;
  let nodes: SecondNode[];
  /** Tokens the stand-in API answers 401 to; any other bearer gets a 200. */
  const refused = new Set<string>();

  beforeAll(async () => {
    api = await startApiStandIn();
    o = await startOAuthTenant(engine, { accessTokenTtlSeconds: TTL_SECONDS, api: { apiBaseUrl: `${api.url}/api` } });
    nodes = [await startSecondNode(o.t), await startSecondNode(o.t)];
    await o.connect('u_o');
  }, 120_000);
  afterAll(async () => {
    for (const node of nodes ?? []) await node.close();
    await o?.close();
    await api?.close();
  });
  beforeEach(() => {
    api.reset();
    refused.clear();
    api.answer = (received, res) => {
      const token = (received.headers.authorization ?? '').replace(/^Bearer /, '');
      res.writeHead(refused.has(token) ? 401 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ token: refused.has(token) ? 'refused' : 'ok', body: received.body.toString('utf8') }));
    };
  });

  const apps = () => [o.t.app, ...nodes.map((n) => n.app)];
  const advance = (seconds: number) => {
    o.t.clock.advance(seconds);
    for (const node of nodes) node.clock.advance(seconds);
  };
  const proxy = (app = o.t.app, method = 'GET', payload?: string) =>
    app.inject({
      method: method as 'GET',
      url: `/v1/end-users/u_o/proxy/${PROVIDER}/items?page=2`,
      headers: { ...o.headers, 'content-type': 'application/json' },
      payload,
    });
  const sentTokens = () => api.received.map((r) => (r.headers.authorization ?? '').replace(/^Bearer /, ''));

  it('adds the access token, and refreshes it first when it expires within 60 seconds', async () => {
    const before = await storedCredential(o, 'u_o');
    const answer = await proxy();
    expect(answer.statusCode).toBe(200);
    expect(api.received[0]!.target).toBe('/api/items?page=2');
    expect(sentTokens()).toEqual([before.accessToken]);

    const grants = o.as.grants.refresh_token;
    advance(TTL_SECONDS - 30);
    expect((await proxy()).statusCode).toBe(200);
    const after = await storedCredential(o, 'u_o');
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(o.as.grants.refresh_token).toBe(grants + 1);
    expect(sentTokens()[1]).toBe(after.accessToken);
  });

  it('answers a 401 with one refresh and one repeat of the call, body and all', async () => {
    advance(o.t.ctx.refreshCooldownSeconds + 1);
    const before = await storedCredential(o, 'u_o');
    refused.add(before.accessToken);
    const grants = o.as.grants.refresh_token;
    const body = JSON.stringify({ name: 'repeat me' });
    const answer = await proxy(o.t.app, 'POST', body);
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toEqual({ token: 'ok', body });
    const after = await storedCredential(o, 'u_o');
    expect(sentTokens()).toEqual([before.accessToken, after.accessToken]);
    expect(api.received.map((r) => r.body.toString('utf8'))).toEqual([body, body]);
    expect(o.as.grants.refresh_token).toBe(grants + 1);
  });

  it('refreshes once for three nodes refused at the same moment, then passes the 401 on within the cooldown', async () => {
    advance(o.t.ctx.refreshCooldownSeconds + 1);
    const before = await storedCredential(o, 'u_o');
    // Every token is refused: each node's call is answered 401, its refresh asked for at once.
    api.answer = (_received, res) => {
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer error="invalid_token"' });
      res.end('{"message":"Bad credentials"}');
    };
    const grants = o.as.grants.refresh_token;
    const answers = await Promise.all(apps().map((app) => proxy(app)));
    for (const answer of answers) {
      expect([answer.statusCode, answer.body, answer.headers['www-authenticate']]).toEqual([
        401,
        '{"message":"Bad credentials"}',
        'Bearer error="invalid_token"',
      ]);
      expect(answer.headers['keyward-upstream']).toBe(new URL(api.url).host);
    }
    expect(o.as.grants.refresh_token).toBe(grants + 1);
    const after = await storedCredential(o, 'u_o');
    expect(after.accessToken).not.toBe(before.accessToken);
    // Every node sent the call twice: refused, then again with the one new token, whichever node refreshed.
    expect(sentTokens().sort()).toEqual([...Array(3).fill(after.accessToken), ...Array(3).fill(before.accessToken)].sort());
    // Within the cooldown, on every node: the stored token is sent once and its 401 passed on, no refresh.
    advance(5);
    api.reset();
    api.answer = (_received, res) => {
      res.writeHead(401);
      res.end();
    };
    for (const app of apps()) expect((await proxy(app)).statusCode).toBe(401);
    expect(sentTokens()).toEqual([after.accessToken, after.accessToken, after.accessToken]);
    expect(o.as.grants.refresh_token).toBe(grants + 1);
  });

  it('does not repeat a call whose body was too large to keep', async () => {
    advance(o.t.ctx.refreshCooldownSeconds + 1);
    refused.add((await storedCredential(o, 'u_o')).accessToken);
    const grants = o.as.grants.refresh_token;
    const answer = await proxy(o.t.app, 'PUT', 'x'.repeat(1024 * 1024 + 1));
    expect(answer.statusCode).toBe(401);
    expect(api.received).toHaveLength(1);
    expect(api.received[0]!.body.byteLength).toBe(1024 * 1024 + 1);
    expect(o.as.grants.refresh_token).toBe(grants);
  });

  it('refuses a revoked credential at the next request on every node', async () => {
    for (const app of apps()) expect((await proxy(app)).statusCode).toBe(200);
    const revoked = await nodes[1]!.app.inject({ method: 'DELETE', url: `/v1/end-users/u_o?provider=${PROVIDER}`, headers: o.headers });
    expect(revoked.statusCode).toBe(200);
    api.reset();
    for (const app of apps()) expectProblem(await proxy(app), 404, 'credential_not_found');
    expect(api.received).toHaveLength(0);
  });
});
