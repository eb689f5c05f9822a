/**
 * Reading the audience (CONTRACT 2.5, 2.6): keyset pages, filters, tenant isolation, and one member
 * with its secrets. Revoking and Idempotency-Key are in end-users-writes.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { iso } from '../../src/primitives/clock.js';
import { ENGINES } from '../helpers/databases.js';
import { readEndUser } from '../helpers/form-session.js';
import { connectStatic } from '../helpers/hosted-form.js';
import { expectProblem } from '../helpers/problem-assertions.js';
import { createTenant, keys, startTestApp, type Tenant, type TestApp } from '../helpers/test-app.js';

interface ListedMember {
  externalUserId: string;
  createdAt: string;
  updatedAt: string;
  credentials: Record<string, unknown>[];
}
interface Page {
  data: ListedMember[];
  hasMore: boolean;
  nextCursor: string | null;
}

const openaiKey = (id: string) => `sk-proj-${id}-openaiopenaiopenaiopenai`;
const anthropicKey = (id: string) => `sk-ant-${id}-anthropicanthropicanthropic`;
const pad = (n: number) => String(n).padStart(2, '0');
/** Five members with credentials, fifteen without, then five made in the same millisecond. */
const WITH_CREDENTIALS = [1, 2, 3, 4, 5].map((n) => `u${pad(n)}`);
const WITH_ANTHROPIC = ['u01', 'u03', 'u05'];
const TIES_INSERTED = ['tie-d', 'tie-a', 'tie-e', 'tie-c', 'tie-b'];
const EXPECTED = [...Array.from({ length: 20 }, (_, i) => `u${pad(i + 1)}`), 'tie-a', 'tie-b', 'tie-c', 'tie-d', 'tie-e'];

describe.each(ENGINES)('the audience API on %s', (engine) => {
  let t: TestApp;
  let a: Tenant;
  let b: Tenant;

  const list = async (tenant: Tenant, query: Record<string, string | number>): Promise<Page> => {
    const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString();
    const response = await t.app.inject({ method: 'GET', url: `/v1/end-users?${qs}`, headers: keys(tenant) });
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as Page;
  };

  /** Follows nextCursor to the end, checking each page's own promises on the way. */
  async function walk(tenant: Tenant, query: Record<string, string | number>, between?: (page: number) => Promise<void>) {
    const limit = Number(query.limit ?? 20);
    const seen: ListedMember[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 200; page++) {
      const body: Page = await list(tenant, cursor === null ? query : { ...query, cursor });
      expect(body.data.length).toBeLessThanOrEqual(limit);
      seen.push(...body.data);
      if (!body.hasMore) {
        expect(body.nextCursor).toBeNull();
        return seen;
      }
      expect(body.data).toHaveLength(limit);
      expect(typeof body.nextCursor).toBe('string');
      cursor = body.nextCursor;
      await between?.(page);
    }
    throw new Error('the pages never ended');
  }
  const ids = (members: ListedMember[]) => members.map((m) => m.externalUserId);

  beforeAll(async () => {
    t = await startTestApp(engine);
    a = await createTenant(t.ctx, { providers: ['openai', 'anthropic'] });
    b = await createTenant(t.ctx);
    for (const id of WITH_CREDENTIALS) {
      t.clock.advance(1);
      await connectStatic(t.app, keys(a), { externalUserId: id, values: { apiKey: openaiKey(id) } });
      if (WITH_ANTHROPIC.includes(id)) {
        await connectStatic(t.app, keys(a), { provider: 'anthropic', externalUserId: id, values: { apiKey: anthropicKey(id) } });
      }
    }
    for (let n = 6; n <= 20; n++) {
      t.clock.advance(1);
      await t.ctx.store.audience.ensureMember(a.serverId, `u${pad(n)}`, iso(t.clock.now()));
    }
    t.clock.advance(1);
    for (const id of TIES_INSERTED) await t.ctx.store.audience.ensureMember(a.serverId, id, iso(t.clock.now()));
    // The other tenant has a member of the same name, with its own secret.
    await connectStatic(t.app, keys(b), { externalUserId: 'u03', values: { apiKey: openaiKey('tenant-b') } });
    t.clock.advance(1);
    await connectStatic(t.app, keys(b), { externalUserId: 'b-only', values: { apiKey: openaiKey('b-only') } });
  });
  afterAll(() => t.close());

  describe('GET /v1/end-users', () => {
    it.each([1, 2, 5, 7, 25, 100])('walks every member exactly once, oldest first then by id, with limit %i', async (limit) => {
      const seen = await walk(a, { limit });
      expect(ids(seen)).toEqual(EXPECTED);
      const times = seen.map((m) => m.createdAt);
      expect([...times].sort()).toEqual(times);
    });

    it('pages 20 members at a time without a limit', async () => {
      const first = await list(a, {});
      expect(first.data).toHaveLength(20);
      expect(first.hasMore).toBe(true);
      const second = await list(a, { cursor: first.nextCursor! });
      expect(ids(second.data)).toEqual(EXPECTED.slice(20));
      expect(second).toMatchObject({ hasMore: false, nextCursor: null });
    });

    it('shows a member added while paging on a later page, skipping and repeating none', async () => {
      const c = await createTenant(t.ctx);
      const early = ['m1', 'm2', 'm3', 'm4', 'm5'];
      for (const id of early) {
        t.clock.advance(1);
        await t.ctx.store.audience.ensureMember(c.serverId, id, iso(t.clock.now()));
      }
      const seen = await walk(c, { limit: 2 }, async (page) => {
        if (page !== 0) return;
        t.clock.advance(1);
        // Named to sort before everyone, but newer: it belongs after the members already listed.
        for (const id of ['late-b', 'a-late']) await t.ctx.store.audience.ensureMember(c.serverId, id, iso(t.clock.now()));
      });
      expect(ids(seen)).toEqual([...early, 'a-late', 'late-b']);
    });

    it('keeps only members with an active credential of the provider', async () => {
      expect(ids(await walk(a, { provider: 'anthropic', limit: 1 }))).toEqual(WITH_ANTHROPIC);
      expect(ids(await walk(a, { provider: 'openai' }))).toEqual(WITH_CREDENTIALS);
      expect(await list(a, { provider: 'stripe' })).toEqual({ data: [], hasMore: false, nextCursor: null });

      const member = await t.ctx.store.db
        .selectFrom('audience_members')
        .select('id')
        .where('server_id', '=', a.serverId)
        .where('external_user_id', '=', 'u03')
        .executeTakeFirstOrThrow();
      const inactive = t.ctx.store.db.updateTable('credentials').where('member_id', '=', member.id).where('provider', '=', 'anthropic');
      await inactive.set({ status: 'needs_reauth' }).execute();
      try {
        expect(ids((await list(a, { provider: 'anthropic' })).data)).toEqual(['u01', 'u05']);
      } finally {
        await inactive.set({ status: 'active' }).execute();
      }
    });

    it('lists the credentials of each member without any secret', async () => {
      const response = await t.app.inject({ method: 'GET', url: '/v1/end-users?limit=100', headers: keys(a) });
      for (const id of WITH_CREDENTIALS) {
        expect(response.body).not.toContain(openaiKey(id));
        expect(response.body).not.toContain(anthropicKey(id));
      }
      const [u01] = (response.json() as Page).data;
      expect(u01!.externalUserId).toBe('u01');
      expect(u01!.credentials.map((c) => c.provider)).toEqual(['anthropic', 'openai']);
      for (const credential of u01!.credentials) {
        expect(Object.keys(credential).sort()).toEqual(['connectedAt', 'id', 'lastCheck', 'lastUsedAt', 'provider', 'status', 'type', 'updatedAt']);
        expect(credential).toMatchObject({ type: 'static', status: 'active', id: expect.stringMatching(/^cred_/) });
      }
      const u06 = (response.json() as Page).data.find((m) => m.externalUserId === 'u06');
      expect(u06!.credentials).toEqual([]);
    });

    it('never shows the members of another server', async () => {
      expect(ids(await walk(a, { limit: 100 }))).not.toContain('b-only');
      expect(ids(await walk(b, { limit: 1 }))).toEqual(['u03', 'b-only']);
      expect(ids(await walk(b, { provider: 'anthropic' }))).toEqual([]);
    });
  });

  describe('the prefix filter', () => {
    const MEMBERS = ['a%x', 'a_y', 'ab', 'abc', 'A1', 'b', 'xa', '\u{1F600}x', '\u{1F600}'];
    let d: Tenant;
    beforeAll(async () => {
      d = await createTenant(t.ctx);
      for (const id of MEMBERS) {
        t.clock.advance(1);
        await t.ctx.store.audience.ensureMember(d.serverId, id, iso(t.clock.now()));
      }
    });

    it.each([
      ['a', ['a%x', 'a_y', 'ab', 'abc']],
      ['a%', ['a%x']],
      ['a_', ['a_y']],
      ['%', []],
      ['_', []],
      ['A', ['A1']],
      ['ab', ['ab', 'abc']],
      ['abcd', []],
      ['\u{1F600}', ['\u{1F600}x', '\u{1F600}']],
      ['x', ['xa']],
    ])('prefix %j matches exactly and case-sensitively', async (prefix, expected) => {
      expect(ids(await walk(d, { prefix, limit: 1 }))).toEqual(expected);
    });

    it('lists every member without a prefix', async () => {
      expect(ids(await walk(d, { limit: 3 }))).toEqual(MEMBERS);
    });
  });

  describe('GET /v1/end-users/{externalUserId}', () => {
    it('returns each static credential with the values the end user typed', async () => {
      const { status, body } = await readEndUser(t.app, keys(a), 'u03');
      expect(status).toBe(200);
      expect(body).toMatchObject({ externalUserId: 'u03', createdAt: expect.any(String), updatedAt: expect.any(String) });
      expect(body.credentials.map((c) => [c.provider, c.type, c.status, c.values])).toEqual([
        ['anthropic', 'static', 'active', { apiKey: anthropicKey('u03') }],
        ['openai', 'static', 'active', { apiKey: openaiKey('u03') }],
      ]);
    });

    it('returns a member without credentials with an empty list', async () => {
      const { status, body } = await readEndUser(t.app, keys(a), 'tie-a');
      expect(status).toBe(200);
      expect(body.credentials).toEqual([]);
    });

    it("reads each server's own member of a shared name", async () => {
      const { body } = await readEndUser(t.app, keys(b), 'u03');
      expect(body.credentials.map((c) => c.values)).toEqual([{ apiKey: openaiKey('tenant-b') }]);
    });

    it("answers end_user_not_found for an unknown member and for another server's member", async () => {
      for (const [tenant, id] of [
        [a, 'nobody'],
        [a, 'b-only'],
        [b, 'u01'],
      ] as const) {
        const response = await t.app.inject({ method: 'GET', url: `/v1/end-users/${id}`, headers: keys(tenant) });
        expectProblem(response, 404, 'end_user_not_found');
      }
    });
  });
});
