/**
 * The Prometheus series (README, "Metrics"), scraped from the metrics listener on a real port after
 * real traffic: the API on its own socket, refreshes against a real authorization server
 * (oidc-provider). Each test reads the change its own traffic made (a scrape before, one after), with
 * exact counts.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { catalogProvider } from '../../src/catalog/catalog.js';
import type { Provider } from '../../src/catalog/provider-definition.js';
import { UNMATCHED_ROUTE } from '../../src/metrics/http-metrics.js';
import { type MetricsServer, startMetricsServer } from '../../src/metrics/metrics-server.js';
import { CLI_ACTOR } from '../../src/services/context.js';
import { generateKey } from '../../src/services/keys/key-format.js';
import { runBackgroundRefresh } from '../../src/services/oauth/background-refresh.js';
import { enableProvider } from '../../src/services/providers/server-providers.js';
import type { AuthorizationServer } from '../helpers/authorization-server.js';
import { ENGINES } from '../helpers/databases.js';
import { storedCredential } from '../helpers/oauth-credentials.js';
import { type OAuthTenant, startOAuthTenant } from '../helpers/oauth-tenant.js';
import { startSecondNode } from '../helpers/test-app.js';
import { subscribe } from '../helpers/webhook-events.js';
import { type Scrape, scrape, scrapeWhen, total } from './scrape.js';

const REQUESTS = 'keyward_http_requests_total';
const DURATIONS = 'keyward_http_request_duration_seconds_count';
const REFRESHES = 'keyward_token_refreshes_total';
const AUTH_FAILURES = 'keyward_auth_failures_total';
const MEMBER_ROUTE = '/v1/end-users/:externalUserId';

/**
 * The catalog's Google with its endpoints moved to the test's authorization server, as a test may
 * stand a local server in for a public provider: a catalog provider whose tokens can be refreshed here.
 */
function googleAt(as: AuthorizationServer): Provider {
  const google = catalogProvider('google');
  if (google?.kind !== 'oauth2') throw new Error('the catalog has no OAuth provider google');
  const { extraAuthorizationParams: _, ...rest } = google;
  return {
    ...rest,
    authorizationUrl: as.authorizationUrl,
    tokenUrl: as.tokenUrl,
    revocationUrl: as.revocationUrl,
    tokenEndpointAuth: 'client_secret_basic',
    defaultScopes: ['api:read'],
  };
}

/** An external user id no metric could contain by chance. */
const memberId = (what: string) => `${what}|${randomBytes(6).toString('hex')}`;

describe.each(ENGINES)('metrics on %s', (engine) => {
  // Tokens that live 120 s: a read asking for 300 s of validity finds each one due.
  let o: OAuthTenant;
  let metrics: MetricsServer;
  let api: string;
  const seen: string[] = [];
  beforeAll(async () => {
    // Besides the server's custom provider `acme`, the catalog's google, answered by the same authorization server.
    const catalog = (slug: string) => (slug === 'google' && o ? googleAt(o.as) : catalogProvider(slug));
    o = await startOAuthTenant(engine, { accessTokenTtlSeconds: 120, listen: true, metrics: true, catalog });
    api = o.t.ctx.publicUrl;
    metrics = await startMetricsServer(o.t.metrics!, { host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await metrics.close();
    await o.close();
  });
  afterEach(() => {
    o.as.tokenEndpoint = 'normal';
  });

  const get = (path: string, headers: Record<string, string> = o.headers) => fetch(`${api}${path}`, { headers });

  it('counts requests by route pattern, method and status, and times them by route and method', async () => {
    const member = memberId('reader');
    seen.push(member);
    await o.connect(member);
    const before = await scrape(metrics.address);
    const path = `/v1/end-users/${encodeURIComponent(member)}`;
    expect((await get(path)).status).toBe(200);
    expect((await get(path)).status).toBe(200);
    expect((await get(path, {})).status).toBe(401); // account_key_missing
    // keys_swapped: each key in the other's header.
    expect((await get(path, { authorization: `Bearer ${o.tenant.serverKey}`, 'x-service-key': o.tenant.accountKey })).status).toBe(401);
    // account_key_invalid: well-formed, but no such key.
    expect((await get(path, { ...o.headers, authorization: `Bearer ${generateKey('account')}` })).status).toBe(401);
    expect((await get('/v1/no-such-route')).status).toBe(404);
    expect((await get(`/nowhere/${member}`)).status).toBe(404);
    const onApi = await get('/metrics');
    expect(onApi.status).toBe(404);
    expect(await onApi.json()).toMatchObject({ code: 'route_not_found', status: 404 });

    const after = await scrapeWhen(metrics.address, REQUESTS, total(before, REQUESTS) + 8);
    const delta = (name: string, labels: Record<string, string>) => after.value(name, labels) - before.value(name, labels);
    expect(total(after, REQUESTS) - total(before, REQUESTS)).toBe(8);
    expect(delta(REQUESTS, { route: MEMBER_ROUTE, method: 'GET', status: '200' })).toBe(2);
    expect(delta(REQUESTS, { route: MEMBER_ROUTE, method: 'GET', status: '401' })).toBe(3);
    expect(delta(REQUESTS, { route: UNMATCHED_ROUTE, method: 'GET', status: '404' })).toBe(3);
    expect(delta(DURATIONS, { route: MEMBER_ROUTE, method: 'GET' })).toBe(5);
    expect(delta(DURATIONS, { route: UNMATCHED_ROUTE, method: 'GET' })).toBe(3);
    // Every request falls in the histogram's last bucket, and the fast ones in a bucket below a second.
    expect(delta('keyward_http_request_duration_seconds_bucket', { route: MEMBER_ROUTE, method: 'GET', le: '+Inf' })).toBe(5);
    expect(delta('keyward_http_request_duration_seconds_bucket', { route: MEMBER_ROUTE, method: 'GET', le: '1' })).toBe(5);
    expect(delta('keyward_http_request_duration_seconds_sum', { route: MEMBER_ROUTE, method: 'GET' })).toBeGreaterThan(0);

    expect(total(after, AUTH_FAILURES) - total(before, AUTH_FAILURES)).toBe(3);
    for (const code of ['account_key_missing', 'keys_swapped', 'account_key_invalid']) expect(delta(AUTH_FAILURES, { code })).toBe(1);

    // The start and the callback of the flow above, counted by their patterns.
    expect(after.value(REQUESTS, { route: '/v1/oauth/:provider/start', method: 'POST', status: '201' })).toBeGreaterThanOrEqual(1);
    expect(after.all(REQUESTS).filter((s) => s.labels.route === '/oauth/callback').length).toBeGreaterThanOrEqual(1);
  });

  it('counts refresh outcomes: refreshed, skipped within the cooldown, rejected, failed', async () => {
    const [fresh, revoked, outage] = [memberId('fresh'), memberId('revoked'), memberId('outage')];
    seen.push(fresh, revoked, outage);
    for (const member of [fresh, revoked, outage]) await o.connect(member);
    await o.as.revoke((await storedCredential(o, revoked)).refreshToken);
    const before = await scrape(metrics.address);
    const delta = (after: Awaited<ReturnType<typeof scrape>>, outcome: string) =>
      after.value(REFRESHES, { provider: 'custom', outcome }) - before.value(REFRESHES, { provider: 'custom', outcome });

    o.t.clock.advance(1);
    expect((await o.read(fresh, 300)).error).toBeUndefined();
    // The same moment: the attempt just made is this read's answer, neither a refresh nor a skip.
    await o.read(fresh, 300);
    o.t.clock.advance(1);
    // A second later the token is still due, but the cooldown holds: served as it is, without asking.
    await o.read(fresh, 300);
    expect((await o.read(revoked, 300)).status).toBe('needs_reauth');
    o.as.tokenEndpoint = 'unavailable';
    expect((await o.read(outage, 300)).error).toMatchObject({ code: 'refresh_failed' });

    const after = await scrape(metrics.address);
    expect(delta(after, 'refreshed')).toBe(1);
    expect(delta(after, 'skipped_cooldown')).toBe(1);
    expect(delta(after, 'rejected')).toBe(1);
    expect(delta(after, 'failed')).toBe(1);
    expect(total(after, REFRESHES) - total(before, REFRESHES)).toBe(4);
  });

  it('counts the background refresh as its run reports it', async () => {
    await o.connect(memberId('background'));
    const before = await scrape(metrics.address);
    o.t.clock.advance(2 * 3600);
    const report = (await runBackgroundRefresh(o.t.ctx, { hours: 1 }))!;
    expect(report.refreshed).toBeGreaterThanOrEqual(1);
    const after = await scrape(metrics.address);
    // Over every provider: the run refreshes whatever is due, the other tests' credentials included.
    const ofOutcome = (s: Scrape, outcome: string) =>
      s
        .all(REFRESHES)
        .filter((x) => x.labels.outcome === outcome)
        .reduce((sum, x) => sum + x.value, 0);
    const delta = (outcome: string) => ofOutcome(after, outcome) - ofOutcome(before, outcome);
    expect(delta('refreshed')).toBe(report.refreshed);
    expect(delta('failed')).toBe(report.failed);
    expect(delta('rejected')).toBe(report.rejected);
    // Busy credentials were not attempted: nothing else is counted.
    expect(total(after, REFRESHES) - total(before, REFRESHES)).toBe(report.picked - report.busy);
  });

  it("labels a refresh with its catalog provider's slug, and every custom provider's `custom`: a tenant's slug never shows", async () => {
    const [ofCatalog, ofCustom] = [memberId('catalog'), memberId('custom')];
    seen.push(ofCatalog, ofCustom);
    const { basic } = o.as.clients;
    await enableProvider(o.t.ctx, { serverId: o.tenant.serverId, slug: 'google', clientId: basic.id, clientSecret: basic.secret, actor: CLI_ACTOR });
    const start = await o.t.app.inject({ method: 'POST', url: '/v1/oauth/google/start', headers: o.headers, payload: { externalUserId: ofCatalog } });
    expect(start.statusCode, start.body).toBe(201);
    expect((await o.callback(await o.as.approve(start.json().authorizationUrl))).statusCode).toBe(200);
    await o.connect(ofCustom);
    const before = await scrape(metrics.address);
    o.t.clock.advance(1);
    for (const member of [ofCatalog, ofCustom]) expect((await get(`/v1/end-users/${encodeURIComponent(member)}?minValiditySeconds=300`)).status).toBe(200);

    const after = await scrape(metrics.address);
    const delta = (provider: string) =>
      after.value(REFRESHES, { provider, outcome: 'refreshed' }) - before.value(REFRESHES, { provider, outcome: 'refreshed' });
    expect([delta('google'), delta('custom')]).toEqual([1, 1]);
    expect(total(after, REFRESHES) - total(before, REFRESHES)).toBe(2);
    expect(new Set(after.all(REFRESHES).map((s) => s.labels.provider))).toEqual(new Set(['google', 'custom']));
    expect(after.text).not.toContain('acme');
  });

  it('counts webhook attempts by what they did to their message: retrying, delivered, failed', async () => {
    const subscriber = await subscribe(o.t, o.tenant.serverId, ['credential.connected']);
    try {
      const before = await scrape(metrics.address);
      // The first message: a 503 (retried later), then a 204; the second: a 400 (given up at once).
      subscriber.receiver.script({ status: 503 }, { status: 204 }, { status: 400 });
      await o.connect(memberId('hooked'));
      expect(await o.t.webhooks.drain()).toBe(1);
      o.t.clock.advance(60);
      expect(await o.t.webhooks.drain()).toBe(1);
      await o.connect(memberId('refused'));
      expect(await o.t.webhooks.drain()).toBe(1);
      expect(subscriber.receiver.received).toHaveLength(3);
      const after = await scrape(metrics.address);
      const delta = (outcome: string) =>
        after.value('keyward_webhook_deliveries_total', { outcome }) - before.value('keyward_webhook_deliveries_total', { outcome });
      expect([delta('retrying'), delta('delivered'), delta('failed')]).toEqual([1, 1, 1]);
    } finally {
      await subscriber.close();
    }
  });

  it('shows no key, token, id or path in a scrape, and only route patterns as routes', async () => {
    const member = memberId('secretive');
    seen.push(member);
    const { flowId } = await o.connect(member);
    const credential = await storedCredential(o, member);
    const form = await fetch(`${api}/v1/credentials/static/openai/connect`, {
      method: 'POST',
      headers: { ...o.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ externalUserId: member }),
    }).then((r) => r.json() as Promise<{ id: string; url: string }>);
    const formPath = new URL(form.url).pathname;
    const before = await scrape(metrics.address);
    await get(`/v1/end-users/${encodeURIComponent(member)}`);
    await get(`/dashboard/servers/${o.tenant.serverId}/audience/${encodeURIComponent(member)}`, {});
    await get(formPath, {});
    await get(`${formPath}/nothing`, {});
    const { text, samples } = await scrapeWhen(metrics.address, REQUESTS, total(before, REQUESTS) + 4);
    const token = formPath.split('/').pop()!;
    const secrets = [
      o.tenant.accountKey,
      o.tenant.serverKey,
      credential.accessToken,
      credential.refreshToken,
      flowId,
      form.id,
      token,
      o.tenant.serverId,
      o.tenant.accountId,
    ];
    for (const value of [...secrets, ...seen, ...seen.map(encodeURIComponent)]) expect(text).not.toContain(value);
    expect(text).not.toMatch(/service_(acct|srv)_|oflow_|cfs_|cred_|srv_|acct_|req_/);
    const patterns = new Set([...o.t.app.routeTable.map((r) => r.url), UNMATCHED_ROUTE]);
    const routes = new Set(samples.filter((s) => s.name === REQUESTS).map((s) => s.labels.route!));
    for (const route of routes) expect(patterns, route).toContain(route);
  });

  it('reports the database figures and the process defaults', async () => {
    const now = await scrape(metrics.address);
    expect(now.value('keyward_db_transactions_in_flight')).toBe(0);
    if (engine === 'postgres') {
      const pool = (state: string) => now.value('keyward_db_pool_connections', { state });
      expect(pool('max')).toBe(10);
      expect(pool('total')).toBeGreaterThanOrEqual(1);
      expect(pool('total')).toBeLessThanOrEqual(10);
      expect(pool('idle')).toBeLessThanOrEqual(pool('total'));
      expect(now.all('keyward_db_pool_waiting_queries')).toEqual([{ name: 'keyward_db_pool_waiting_queries', labels: {}, value: 0 }]);
      expect(now.all('keyward_sqlite_wal_bytes')).toEqual([]);
    } else {
      // WAL mode: every write since start sits in the -wal file until a checkpoint copies it back.
      expect(now.value('keyward_sqlite_wal_bytes')).toBeGreaterThan(0);
      expect(now.all('keyward_db_pool_connections')).toEqual([]);
    }
    for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
      expect(now.all(name), name).toHaveLength(1);
    }
  });

  it('answers GET /metrics on its own port and nothing else', async () => {
    expect((await fetch(`${metrics.address}/`)).status).toBe(404);
    expect((await fetch(`${metrics.address}/v1/end-users`, { headers: o.headers })).status).toBe(404);
    const post = await fetch(`${metrics.address}/metrics`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    const head = await fetch(`${metrics.address}/metrics`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('keeps each node to its own registry: a second node in the process counts only its own requests', async () => {
    const second = await startSecondNode(o.t, { metrics: true });
    const secondMetrics = await startMetricsServer(second.metrics!, { host: '127.0.0.1', port: 0 });
    try {
      const first = await scrape(metrics.address);
      expect((await second.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
      const theirs = await scrapeWhen(secondMetrics.address, REQUESTS, 1);
      expect(theirs.all(REQUESTS)).toEqual([{ name: REQUESTS, labels: { route: '/healthz', method: 'GET', status: '200' }, value: 1 }]);
      expect((await scrape(metrics.address)).value(REQUESTS, { route: '/healthz', method: 'GET', status: '200' })).toBe(
        first.value(REQUESTS, { route: '/healthz', method: 'GET', status: '200' }),
      );
    } finally {
      await secondMetrics.close();
      await second.close();
    }
  });
});
