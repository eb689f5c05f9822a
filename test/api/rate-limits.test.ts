import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AddressLimit, addressGroup, TRACKED_ADDRESSES } from '../../src/auth/rate-limit.js';
import { CLI_ACTOR } from '../../src/services/context.js';
import { createAccountKey, listAccountKeys, revokeAccountKey } from '../../src/services/keys/account-keys.js';
import { generateKey } from '../../src/services/keys/key-format.js';
import { bearer, withBadChecksum } from '../helpers/auth-matrix.js';
import { ENGINES } from '../helpers/databases.js';
import { snapshotTables } from '../helpers/hosted-form.js';
import { createTenant, keys, startWithTenant, type Tenant, type TestApp } from '../helpers/test-app.js';

const PROBLEM_JSON = /^application\/problem\+json(;|$)/;

async function newKey(t: TestApp, tenant: Tenant, expiresAt?: string) {
  return createAccountKey(t.ctx, { accountId: tenant.accountId, label: 'rate tests', expiresAt, actor: CLI_ACTOR });
}

function keyRow(t: TestApp, keyId: string) {
  return t.ctx.store.db.selectFrom('account_keys').selectAll().where('id', '=', keyId).executeTakeFirstOrThrow();
}

describe('the per-address counter', () => {
  const NOW = Date.parse('2026-11-23T10:00:00.000Z');
  const ipv4 = (n: number) => `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;

  it('groups IPv6 addresses by /64 and IPv4-mapped addresses as IPv4', () => {
    expect(addressGroup('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressGroup('2001:0db8:0001:0002:bbbb:cccc:dddd:eeee')).toBe('2001:db8:1:2::/64');
    expect(addressGroup('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(addressGroup('::ffff:203.0.113.5')).toBe('203.0.113.5');
    expect(addressGroup('203.0.113.5')).toBe('203.0.113.5');
    expect(addressGroup('not an address')).toBe('not an address');
  });

  it('stays within its bound after 200,000 distinct addresses, forgetting the oldest windows first', () => {
    const counter = new AddressLimit(60);
    for (let i = 0; i < 200_000; i += 1) counter.hit(ipv4(i), NOW);
    expect(counter.size).toBe(TRACKED_ADDRESSES);
    // The newest address still has its count; the oldest was pushed out and starts afresh.
    expect(counter.hit(ipv4(199_999), NOW).remaining).toBe(58);
    expect(counter.hit(ipv4(0), NOW).remaining).toBe(59);
    expect(counter.size).toBe(TRACKED_ADDRESSES);
  });

  it('costs the same per hit when full as when empty', () => {
    const counter = new AddressLimit(60, 50_000);
    let next = 0;
    const batch = () => {
      const started = performance.now();
      for (const end = next + 10_000; next < end; next += 1) counter.hit(ipv4(next), NOW);
      return performance.now() - started;
    };
    // The fastest of a few batches, not one: on a busy machine any single batch may be paused.
    const fastest = (batches: number) => Math.min(...Array.from({ length: batches }, batch));
    const empty = fastest(4);
    while (next < 150_000) batch();
    // At the bound every hit evicts; a structure that scanned for its oldest entry would be tens of times slower.
    expect(counter.size).toBe(50_000);
    expect(fastest(4)).toBeLessThan(empty * 4);
  });

  it('limits within a window, restarts it after a minute, and drops ended windows as hits come', () => {
    const counter = new AddressLimit(2, 10);
    expect([1, 2, 3].map(() => counter.hit('192.0.2.1', NOW).limited)).toEqual([false, false, true]);
    expect(counter.hit('192.0.2.1', NOW + 30_000)).toEqual({ remaining: 0, resetSeconds: 30, limited: true });
    counter.hit('192.0.2.2', NOW + 1000);
    counter.hit('192.0.2.3', NOW + 2000);
    expect(counter.size).toBe(3);
    // A minute on, the first two windows have ended: the next hit drops them.
    expect(counter.hit('192.0.2.4', NOW + 61_500)).toEqual({ remaining: 1, resetSeconds: 60, limited: false });
    expect(counter.size).toBe(2);
    expect(counter.hit('192.0.2.1', NOW + 61_500).limited).toBe(false);
  });
});

describe.each(ENGINES)('rate limits and key bookkeeping on %s', (engine) => {
  describe('per account key', () => {
    const LIMIT = 3;
    let t: TestApp, tenant: Tenant;
    beforeAll(async () => {
      ({ t, tenant } = await startWithTenant(engine, { rateLimitPerMinute: LIMIT }));
    });
    afterAll(() => t.close());

    const asKey = (key: string, request: InjectOptions = { method: 'GET', url: '/v1/end-users' }) =>
      t.app.inject({ ...request, headers: { ...keys({ accountKey: key, serverKey: tenant.serverKey }), ...request.headers } });

    it('announces the policy, counts down across every /v1 route, refuses the next one, and resets after the window', async () => {
      const { key } = await newKey(t, tenant);
      const requests: InjectOptions[] = [
        { method: 'GET', url: '/v1/end-users' },
        { method: 'POST', url: '/v1/credentials/static/openai/connect', payload: { externalUserId: 'u_1' } },
        { method: 'GET', url: '/v1/no-such-route' },
      ];
      const statuses = [200, 201, 404];
      for (const [i, request] of requests.entries()) {
        const response = await asKey(key, request);
        expect(response.statusCode).toBe(statuses[i]);
        expect(response.headers['ratelimit-policy']).toBe(`"default";q=${LIMIT};w=60`);
        expect(response.headers.ratelimit).toBe(`"default";r=${LIMIT - 1 - i};t=60`);
        expect(response.headers['retry-after']).toBeUndefined();
      }
      t.clock.advance(20);
      const refused = await asKey(key);
      expect(refused.statusCode).toBe(429);
      expect(refused.headers['content-type']).toMatch(PROBLEM_JSON);
      expect(refused.json()).toMatchObject({ code: 'rate_limited', status: 429, type: '/errors/rate_limited' });
      expect(refused.headers['retry-after']).toBe('40');
      expect(refused.headers.ratelimit).toBe('"default";r=0;t=40');
      expect(refused.headers['ratelimit-policy']).toBe(`"default";q=${LIMIT};w=60`);
      expect(refused.headers['www-authenticate']).toBeUndefined();
      expect(refused.body).not.toContain(key);

      t.clock.advance(61);
      const again = await asKey(key);
      expect(again.statusCode).toBe(200);
      expect(again.headers.ratelimit).toBe(`"default";r=${LIMIT - 1};t=60`);
    });

    it('counts each account key on its own, even within one account', async () => {
      const spent = await newKey(t, tenant);
      const other = await newKey(t, tenant);
      for (let i = 0; i < LIMIT; i += 1) expect((await asKey(spent.key)).statusCode).toBe(200);
      expect((await asKey(spent.key)).statusCode).toBe(429);
      const response = await asKey(other.key);
      expect(response.statusCode).toBe(200);
      expect(response.headers.ratelimit).toBe(`"default";r=${LIMIT - 1};t=60`);
    });

    it('spends nothing on requests the guard refuses before step 15', async () => {
      const { key } = await newKey(t, tenant);
      const personal = await createTenant(t.ctx, { mode: 'personal' });
      for (let i = 0; i < LIMIT + 2; i += 1) {
        const refused = await t.app.inject({
          method: 'GET',
          url: '/v1/end-users',
          headers: { authorization: bearer(key), 'x-service-key': personal.serverKey },
        });
        expect(refused.statusCode).toBe(403);
      }
      const response = await asKey(key);
      expect(response.statusCode).toBe(200);
      expect(response.headers.ratelimit).toBe(`"default";r=${LIMIT - 1};t=60`);
    });
  });

  describe('failed authentications per address', () => {
    const FAILURES = 5;
    let t: TestApp, tenant: Tenant;
    beforeAll(async () => {
      ({ t, tenant } = await startWithTenant(engine, { authFailureLimitPerMinute: FAILURES }));
    });
    afterAll(() => t.close());

    const unknownKey = () => ({ authorization: bearer(generateKey('account')), 'x-service-key': tenant.serverKey });
    const from = (remoteAddress: string, headers: Record<string, string>) => t.app.inject({ method: 'GET', url: '/v1/end-users', headers, remoteAddress });

    it('answers 429 past the limit, yet lets a valid request from that address through and leaves other addresses alone', async () => {
      for (let i = 0; i < FAILURES; i += 1) {
        const failed = await from('203.0.113.7', unknownKey());
        expect(failed.statusCode).toBe(401);
        expect(failed.json().code).toBe('account_key_invalid');
      }
      const limited = await from('203.0.113.7', unknownKey());
      expect(limited.statusCode).toBe(429);
      expect(limited.headers['content-type']).toMatch(PROBLEM_JSON);
      expect(limited.json().code).toBe('rate_limited');
      expect(limited.headers['retry-after']).toMatch(/^[1-9]\d*$/);
      expect((await from('203.0.113.7', { 'x-service-key': tenant.serverKey })).statusCode).toBe(429);

      const valid = await from('203.0.113.7', keys(tenant));
      expect(valid.statusCode).toBe(200);
      const elsewhere = await from('198.51.100.9', unknownKey());
      expect(elsewhere.statusCode).toBe(401);
      expect(elsewhere.json().code).toBe('account_key_invalid');

      t.clock.advance(61);
      expect((await from('203.0.113.7', unknownKey())).statusCode).toBe(401);
    });

    it('counts failures on every spelling of a /v1 path, undecodable ones included, and limits them there too', async () => {
      const address = '203.0.113.99';
      const spellings = ['/%761/end-users', '/v1/%65nd-users/u_1', '/v1/end-users/%zz', '/v1/end-users/%ED%A0%80', '/%76%31/no-such-route'];
      for (const url of spellings) {
        const failed = await t.app.inject({ method: 'GET', url, headers: unknownKey(), remoteAddress: address });
        expect({ url, status: failed.statusCode, code: failed.json().code }).toEqual({ url, status: 401, code: 'account_key_invalid' });
      }
      for (const url of spellings) {
        const limited = await t.app.inject({ method: 'GET', url, headers: unknownKey(), remoteAddress: address });
        expect({ url, status: limited.statusCode, code: limited.json().code }).toEqual({ url, status: 429, code: 'rate_limited' });
        expect(limited.headers['retry-after']).toMatch(/^[1-9]\d*$/);
      }
    });

    it('counts an IPv6 address with its /64, and an IPv4-mapped address as its IPv4 address', async () => {
      for (let i = 0; i < FAILURES; i += 1) expect((await from(`2001:db8:7:7::${i + 1}`, unknownKey())).statusCode).toBe(401);
      // Another address of the same /64 shares its count; the next /64 has its own.
      expect((await from('2001:db8:7:7:ffff:ffff:ffff:fffe', unknownKey())).statusCode).toBe(429);
      expect((await from('2001:db8:7:8::1', unknownKey())).statusCode).toBe(401);

      for (let i = 0; i < FAILURES; i += 1) expect((await from('::ffff:203.0.113.80', unknownKey())).statusCode).toBe(401);
      expect((await from('203.0.113.80', unknownKey())).statusCode).toBe(429);
      expect((await from('::ffff:203.0.113.81', unknownKey())).statusCode).toBe(401);
    });

    // Issue 17 item 8: 8,000 guesses sent with an Origin were all answered 403, none of them counted.
    it('counts refusals at step 1 (an Origin, or OPTIONS) like any other failed authentication', async () => {
      const address = '203.0.113.21';
      const fromBrowser = () => ({ ...unknownKey(), origin: 'https://evil.example' });
      for (let i = 0; i < FAILURES; i += 1) {
        const refused = await from(address, fromBrowser());
        expect({ status: refused.statusCode, code: refused.json().code }).toEqual({ status: 403, code: 'browser_access_forbidden' });
      }
      const limited = await from(address, fromBrowser());
      expect(limited.statusCode).toBe(429);
      expect(limited.headers['content-type']).toMatch(PROBLEM_JSON);
      expect(limited.json().code).toBe('rate_limited');
      expect(limited.headers['retry-after']).toMatch(/^[1-9]\d*$/);
      const preflight = await t.app.inject({ method: 'OPTIONS', url: '/v1/end-users', remoteAddress: address });
      expect({ status: preflight.statusCode, code: preflight.json().code }).toEqual({ status: 429, code: 'rate_limited' });
      // A valid request from that address still goes through.
      expect((await from(address, keys(tenant))).statusCode).toBe(200);
    });

    it('counts step-1 refusals and later ones against the same budget', async () => {
      const address = '203.0.113.22';
      const preflight = () => t.app.inject({ method: 'OPTIONS', url: '/v1/end-users', remoteAddress: address });
      for (let i = 0; i < 2; i += 1) expect((await preflight()).statusCode).toBe(403);
      for (let i = 0; i < FAILURES - 2; i += 1) expect((await from(address, unknownKey())).statusCode).toBe(401);
      expect((await preflight()).statusCode).toBe(429);
      expect((await from(address, unknownKey())).statusCode).toBe(429);
    });

    it('still records where a live key was sent from a browser, within the limit and past it', async () => {
      const address = '203.0.113.23';
      const withOrigin = (key: string, origin: string) => from(address, { ...keys({ accountKey: key, serverKey: tenant.serverKey }), origin });
      const first = await newKey(t, tenant);
      expect((await withOrigin(first.key, 'https://first.example')).statusCode).toBe(403);
      expect((await keyRow(t, first.keyId)).exposed_origin).toBe('https://first.example');
      for (let i = 0; i < FAILURES - 1; i += 1) expect((await from(address, unknownKey())).statusCode).toBe(401);
      const second = await newKey(t, tenant);
      const limited = await withOrigin(second.key, 'https://second.example');
      expect(limited.statusCode).toBe(429);
      expect(limited.body).not.toContain(second.key);
      expect((await keyRow(t, second.keyId)).exposed_origin).toBe('https://second.example');
    });

    it('does not count valid requests as failures', async () => {
      for (let i = 0; i < FAILURES - 1; i += 1) expect((await from('192.0.2.44', unknownKey())).statusCode).toBe(401);
      for (let i = 0; i < 10; i += 1) expect((await from('192.0.2.44', keys(tenant))).statusCode).toBe(200);
      expect((await from('192.0.2.44', unknownKey())).statusCode).toBe(401);
      expect((await from('192.0.2.44', unknownKey())).statusCode).toBe(429);
    });
  });

  describe('failed authentications per address behind a trusted proxy', () => {
    let t: TestApp, tenant: Tenant;
    beforeAll(async () => {
      ({ t, tenant } = await startWithTenant(engine, { authFailureLimitPerMinute: 2, trustProxy: ['127.0.0.1'] }));
    });
    afterAll(() => t.close());

    const viaProxy = (client: string) =>
      t.app.inject({
        method: 'GET',
        url: '/v1/end-users',
        remoteAddress: '127.0.0.1',
        headers: { authorization: bearer(generateKey('account')), 'x-service-key': tenant.serverKey, 'x-forwarded-for': client },
      });

    it('counts each client named by X-Forwarded-For, not the proxy', async () => {
      for (let i = 0; i < 2; i += 1) expect((await viaProxy('203.0.113.50')).statusCode).toBe(401);
      expect((await viaProxy('203.0.113.50')).statusCode).toBe(429);
      expect((await viaProxy('198.51.100.60')).statusCode).toBe(401);
    });
  });

  describe('browser exposure and lastUsedAt', () => {
    let t: TestApp, tenant: Tenant;
    beforeAll(async () => {
      ({ t, tenant } = await startWithTenant(engine));
    });
    afterAll(() => t.close());

    const fromBrowser = (headers: Record<string, string>) =>
      t.app.inject({ method: 'GET', url: '/v1/end-users', headers: { ...headers, origin: 'https://evil.example' } });

    it('refuses a live key sent with an Origin and records where it was seen, with an audit event', async () => {
      const { keyId, key } = await newKey(t, tenant);
      const response = await fromBrowser(keys({ accountKey: key, serverKey: tenant.serverKey }));
      expect(response.statusCode).toBe(403);
      expect(response.headers['content-type']).toMatch(PROBLEM_JSON);
      expect(response.json().code).toBe('browser_access_forbidden');
      expect(response.body).not.toContain(key);

      const row = await keyRow(t, keyId);
      expect({ origin: row.exposed_origin, at: row.exposed_at }).toEqual({ origin: 'https://evil.example', at: t.clock.now().toISOString() });
      expect(row.last_used_at).toBeNull();
      const events = await t.ctx.store.db
        .selectFrom('audit_events')
        .selectAll()
        .where('action', '=', 'account_key.browser_exposure')
        .where('target_id', '=', keyId)
        .execute();
      expect(events).toHaveLength(1);
      expect(events[0]!.account_id).toBe(tenant.accountId);
      expect(JSON.parse(events[0]!.detail)).toMatchObject({ origin: 'https://evil.example' });
      expect(events[0]!.detail).not.toContain(key.slice(13));
      // What the dashboard and `key list` show as "used from a browser at ORIGIN".
      const listed = (await listAccountKeys(t.ctx, tenant.accountId)).find((k) => k.id === keyId);
      expect(listed?.browserExposure).toEqual({ origin: 'https://evil.example', at: t.clock.now().toISOString() });
    });

    it('records the exposure from the Bearer value alone, without a server key', async () => {
      const { keyId, key } = await newKey(t, tenant);
      expect((await fromBrowser({ authorization: bearer(key) })).statusCode).toBe(403);
      expect((await keyRow(t, keyId)).exposed_origin).toBe('https://evil.example');
    });

    it('records nothing for a revoked, expired, unknown or malformed key', async () => {
      const revoked = await newKey(t, tenant);
      await revokeAccountKey(t.ctx, revoked.keyId, CLI_ACTOR);
      const expiring = await newKey(t, tenant, new Date(t.clock.now().getTime() + 60_000).toISOString());
      t.clock.advance(61);
      const before = await snapshotTables(t.ctx);
      for (const key of [revoked.key, expiring.key, generateKey('account'), withBadChecksum(tenant.accountKey)]) {
        const response = await fromBrowser(keys({ accountKey: key, serverKey: tenant.serverKey }));
        expect(response.statusCode).toBe(403);
        expect(response.json().code).toBe('browser_access_forbidden');
      }
      expect(await snapshotTables(t.ctx)).toEqual(before);
    });

    it('writes lastUsedAt on first use, not again within a minute, and again after', async () => {
      const { keyId, key } = await newKey(t, tenant);
      const use = async () =>
        expect((await t.app.inject({ method: 'GET', url: '/v1/end-users', headers: keys({ accountKey: key, serverKey: tenant.serverKey }) })).statusCode).toBe(
          200,
        );
      expect((await keyRow(t, keyId)).last_used_at).toBeNull();
      const first = t.clock.now().toISOString();
      await use();
      expect((await keyRow(t, keyId)).last_used_at).toBe(first);
      t.clock.advance(30);
      await use();
      expect((await keyRow(t, keyId)).last_used_at).toBe(first);
      t.clock.advance(31);
      await use();
      expect((await keyRow(t, keyId)).last_used_at).toBe(t.clock.now().toISOString());
    });
  });
});
