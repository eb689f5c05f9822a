/**
 * One per-key rate limit across every node of one database (CONTRACT 2.2): never more than the limit,
 * at most 10% fewer, with far fewer database writes than requests (auth/key-quota.ts leases shares of
 * the key's quota from rate_limit_windows). Several nodes run on one database, each with its own
 * connections, memory and clock; the clocks are moved in step.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyQuota } from '../../src/auth/key-quota.js';
import { ENGINES } from '../helpers/databases.js';
import { createTenant, newAccountKey, type SecondNode, startSecondNode, startTestApp, type Tenant, type TestApp, TestClock } from '../helpers/test-app.js';

const SLOW = 120_000;
type Node = TestApp | SecondNode;

/** A fresh account key of the tenant, so each test starts with the whole limit. */
function freshKey(t: TestApp, tenant: Tenant) {
  return newAccountKey(t.ctx, tenant, { label: 'rate limit' });
}

/** The key's window row: what the nodes leased in it, and how many lease statements that took. */
function windowRow(t: TestApp, keyId: string) {
  return t.ctx.store.db.selectFrom('rate_limit_windows').selectAll().where('key_id', '=', keyId).executeTakeFirstOrThrow();
}

/**
 * Sends `count` requests at once, the i-th to `pick(i)`, and counts the answers. Every answer is a 200
 * or a 429 `rate_limited` with Retry-After.
 */
async function burst(nodes: Node[], headers: Record<string, string>, count: number, pick = (i: number) => nodes[i % nodes.length]!) {
  const responses = await Promise.all(Array.from({ length: count }, (_, i) => pick(i).app.inject({ method: 'GET', url: '/v1/end-users', headers })));
  let admitted = 0;
  for (const response of responses) {
    if (response.statusCode === 200) {
      admitted += 1;
      continue;
    }
    expect({ status: response.statusCode, code: response.json().code }).toEqual({ status: 429, code: 'rate_limited' });
    expect(response.headers['retry-after']).toMatch(/^[1-9]\d*$/);
  }
  return admitted;
}

const advance = (nodes: Node[], seconds: number) => {
  for (const node of nodes) node.clock.advance(seconds);
};

describe.each(ENGINES)('one rate limit across nodes of one %s database', (engine) => {
  describe('three nodes with a limit of 30 a minute', () => {
    const LIMIT = 30;
    let t: TestApp, tenant: Tenant, others: SecondNode[], nodes: Node[];
    beforeAll(async () => {
      t = await startTestApp(engine, { rateLimitPerMinute: LIMIT });
      others = [await startSecondNode(t, { rateLimitPerMinute: LIMIT }), await startSecondNode(t, { rateLimitPerMinute: LIMIT })];
      nodes = [t, ...others];
      tenant = await createTenant(t.ctx);
    }, SLOW);
    afterAll(async () => {
      for (const node of others) await node.close();
      await t.close();
    });

    it('lets 27 to 30 of 60 requests spread over the nodes through, and never more than 30 in one window', async () => {
      const { keyId, headers } = await freshKey(t, tenant);
      const first = await burst(nodes, headers, 60);
      expect(first).toBeGreaterThanOrEqual(27);
      expect(first).toBeLessThanOrEqual(LIMIT);
      expect((await windowRow(t, keyId)).granted).toBeLessThanOrEqual(LIMIT);

      // Up to the last second of the window nothing more gets through, on any node.
      advance(nodes, 59);
      expect(await burst(nodes, headers, 12)).toBe(0);

      // The next window has the whole limit again, and no more.
      advance(nodes, 1);
      const second = await burst(nodes, headers, 60);
      expect(second).toBeGreaterThanOrEqual(27);
      expect(second).toBeLessThanOrEqual(LIMIT);
      const row = await windowRow(t, keyId);
      expect(row.granted).toBeLessThanOrEqual(LIMIT);
      expect(row.window_start).toBe(t.clock.now().toISOString());
    });

    it('refuses on every node once the window is spent, all three sharing one count', async () => {
      const { headers } = await freshKey(t, tenant);
      // Sent one after the other, each node in turn: a lease of 1 at this limit, so the count is exact.
      let admitted = 0;
      for (let i = 0; i < LIMIT + 6; i += 1)
        admitted += (await nodes[i % 3]!.app.inject({ method: 'GET', url: '/v1/end-users', headers })).statusCode === 200 ? 1 : 0;
      expect(admitted).toBe(LIMIT);
      for (const node of nodes) {
        const refused = await node.app.inject({ method: 'GET', url: '/v1/end-users', headers });
        expect(refused.statusCode).toBe(429);
        expect(refused.headers.ratelimit).toMatch(/^"default";r=0;t=\d+$/);
      }
    });
  });

  describe('two nodes with a limit of 600 a minute', () => {
    const LIMIT = 600;
    let t: TestApp, tenant: Tenant, other: SecondNode, nodes: Node[];
    beforeAll(async () => {
      t = await startTestApp(engine, { rateLimitPerMinute: LIMIT });
      other = await startSecondNode(t, { rateLimitPerMinute: LIMIT });
      nodes = [t, other];
      tenant = await createTenant(t.ctx);
    }, SLOW);
    afterAll(async () => {
      await other.close();
      await t.close();
    });

    it('writes to the database far less often than requests arrive, and lets 540 to 600 through in each window', { timeout: SLOW }, async () => {
      const { keyId, headers } = await freshKey(t, tenant);
      const sendInBatches = async (count: number) => {
        let admitted = 0;
        for (let sent = 0; sent < count; sent += 20) admitted += await burst(nodes, headers, 20);
        return admitted;
      };
      // The key's first window: the nodes are new to it, so their leases are small.
      expect(await sendInBatches(400)).toBe(400);
      const firstLeases = (await windowRow(t, keyId)).leases;
      expect(firstLeases).toBeLessThan(400 / 4);
      const first = 400 + (await sendInBatches(300));
      expect(first).toBeGreaterThanOrEqual(540);
      expect(first).toBeLessThanOrEqual(LIMIT);

      // The next window: both nodes are known from the last one, and lease more at a time.
      advance(nodes, 60);
      expect(await sendInBatches(400)).toBe(400);
      expect((await windowRow(t, keyId)).leases).toBeLessThan(400 / 10);
      const second = 400 + (await sendInBatches(300));
      expect(second).toBeGreaterThanOrEqual(540);
      expect(second).toBeLessThanOrEqual(LIMIT);
    });
  });

  describe('a node that stops', () => {
    const LIMIT = 100;
    let t: TestApp, tenant: Tenant, other: SecondNode;
    beforeAll(async () => {
      t = await startTestApp(engine, { rateLimitPerMinute: LIMIT });
      other = await startSecondNode(t, { rateLimitPerMinute: LIMIT });
      tenant = await createTenant(t.ctx);
    }, SLOW);
    afterAll(async () => {
      await other.close();
      await t.close();
    });

    it('holds its unspent lease until it closes, then gives it back for the other nodes to spend', { timeout: SLOW }, async () => {
      const { keyId, headers } = await freshKey(t, tenant);
      // A third node is the key's first: its lease is 2 (5% of 100, halved for a first node), it spends 1.
      const leaving = await startSecondNode(t, { rateLimitPerMinute: LIMIT });
      const list = (node: Node) => node.app.inject({ method: 'GET', url: '/v1/end-users', headers });
      expect((await list(leaving)).statusCode).toBe(200);
      expect((await windowRow(t, keyId)).granted).toBe(2);

      // While it holds the other one, the two others get the rest: 98, one lease of 1 at a time.
      let admitted = 0;
      for (let i = 0; i < LIMIT; i += 1) admitted += (await list(i % 2 ? t : other)).statusCode === 200 ? 1 : 0;
      expect(admitted).toBe(LIMIT - 2);

      await leaving.close();
      expect((await windowRow(t, keyId)).granted).toBe(LIMIT - 1);
      // A node that found the window spent asks again after a second, and finds what was given back.
      advance([t, other], 1);
      expect((await list(t)).statusCode).toBe(200);
      expect((await list(other)).statusCode).toBe(429);
      expect((await windowRow(t, keyId)).granted).toBe(LIMIT);
    });

    it('gives back nothing once the window is over', { timeout: SLOW }, async () => {
      const { keyId, headers } = await freshKey(t, tenant);
      const leaving = await startSecondNode(t, { rateLimitPerMinute: LIMIT });
      expect((await leaving.app.inject({ method: 'GET', url: '/v1/end-users', headers })).statusCode).toBe(200);
      const before = await windowRow(t, keyId);
      leaving.clock.advance(60);
      await leaving.close();
      expect(await windowRow(t, keyId)).toEqual(before);
    });
  });

  describe('one node', () => {
    const LIMIT = 30;
    let t: TestApp, tenant: Tenant;
    beforeAll(async () => {
      t = await startTestApp(engine, { rateLimitPerMinute: LIMIT });
      tenant = await createTenant(t.ctx);
    }, SLOW);
    afterAll(() => t.close());

    it('is exact, and its RateLimit header counts down exactly', async () => {
      const { headers } = await freshKey(t, tenant);
      for (let i = 1; i <= 10; i += 1) {
        const response = await t.app.inject({ method: 'GET', url: '/v1/end-users', headers });
        expect(response.headers.ratelimit).toBe(`"default";r=${LIMIT - i};t=60`);
      }
      expect(await burst([t], headers, 60)).toBe(LIMIT - 10);
    });

    it('makes requests that find its share empty wait on one lease statement, and one more for all it did not cover', async () => {
      const clock = new TestClock();
      const quota = new KeyQuota(t.ctx.store.rateLimits, clock, 600);
      const { keyId } = await freshKey(t, tenant);
      const states = await Promise.all(Array.from({ length: 50 }, () => quota.take(keyId, clock.now())));
      expect(states.every((state) => !state.limited)).toBe(true);
      // The first lease: 600 × 5%, halved for the key's first node (15); the second: the other 35.
      expect(quota.leaseStatements).toBe(2);
      expect((await windowRow(t, keyId)).granted).toBe(50);
    });

    it('at a lease of 1, a burst takes two statements, not one each, and a spent window asks again only after a second', async () => {
      const clock = new TestClock();
      const quota = new KeyQuota(t.ctx.store.rateLimits, clock, 5);
      const { keyId } = await freshKey(t, tenant);
      const states = await Promise.all(Array.from({ length: 5 }, () => quota.take(keyId, clock.now())));
      expect(states.map((state) => state.limited)).toEqual([false, false, false, false, false]);
      expect(quota.leaseStatements).toBe(2);

      expect((await quota.take(keyId, clock.now())).limited).toBe(true);
      expect((await quota.take(keyId, clock.now())).limited).toBe(true);
      expect(quota.leaseStatements).toBe(3);
      clock.advance(1);
      expect(await quota.take(keyId, clock.now())).toEqual({ remaining: 0, resetSeconds: 59, limited: true });
      expect(quota.leaseStatements).toBe(4);
    });

    it('keeps what leases hold back under 10% even when three nodes meet a key in its first window', async () => {
      const LARGE = 600;
      const clock = new TestClock();
      const quotas = [0, 1, 2].map(() => new KeyQuota(t.ctx.store.rateLimits, clock, LARGE));
      const { keyId } = await freshKey(t, tenant);
      // The worst order: each node takes one lease, then only the last one spends.
      for (const quota of quotas) expect((await quota.take(keyId, clock.now())).limited).toBe(false);
      let admitted = quotas.length;
      for (let i = 0; i < LARGE; i += 1) admitted += (await quotas[2]!.take(keyId, clock.now())).limited ? 0 : 1;
      expect(admitted).toBeGreaterThanOrEqual(LARGE * 0.9);
      expect(admitted).toBeLessThanOrEqual(LARGE);
      expect((await windowRow(t, keyId)).granted).toBe(LARGE);
    });
  });
});
