/**
 * "Cost per page must not grow with the audience size" (CONTRACT 2.5): on a large audience, every
 * page query, with or without the provider and prefix filters, walks an index in list order or sorts
 * a bounded set of prefix matches; never a scan or a sort of the audience, on both engines. Then the
 * pages themselves: order, cursors, filters, members added while paging.
 */
import { type Compilable, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { iso } from '../../src/primitives/clock.js';
import { listMembers, type PageQuery } from '../../src/services/audience/members.js';
import { CLI_ACTOR } from '../../src/services/context.js';
import { storeCredential } from '../../src/services/credentials/credentials.js';
import { PREFIX_RANGE_LIMIT, PREFIX_WALK_LIMIT, prefixEnd } from '../../src/store/audience-page-queries.js';
import type { PageFilter, PagePlan, PagePosition } from '../../src/store/audience-repository.js';
import { ENGINES } from '../helpers/databases.js';
import { queryPlan } from '../helpers/query-plans.js';
import { numbersUpTo, placeholderBytes, secondsAfter2026 } from '../helpers/sql-fill.js';
import { startWithTenant, type Tenant, type TestApp } from '../helpers/test-app.js';

const AUDIENCE = 20_000;
const BASE = Date.UTC(2026, 0, 1);
const at = (second: number) => new Date(BASE + second * 1000).toISOString();

/** The provider "rare" (a catalog slug is not needed: nothing here reads the provider's definition). */
const RARE_ACTIVE = [3, 5_000, 10_000, 15_000, 19_999].map((i) => `user-${i}`);
const RARE_NEEDS_REAUTH = 'user-7000';
/** Five "zz-" members, each made in the same second as a "user-" member: the id breaks the tie. */
const ZZ = [1, 2, 3, 4, 5].map((n) => ({ id: `zz-${n}`, second: n * 4_000 }));
const ZZ_RARE = 'zz-3';
/**
 * More members start with "grp-" than are sorted, so a walk looks for them: 2,500 made in the first
 * 2,500 seconds (each with a "user-" member of the same second), then 3 near the end, further from
 * the others than a walk goes before it gives up.
 */
const GROUP = 2_500;
const GROUP_LATE = [19_990, 19_991, 19_992];
/** Made through the services after the bulk, one a second, in this order. */
const SPECIAL = ['a%b', 'a_b', 'aXb', 'A%b', 'é-1', 'É-1', 'é-2', '\u{1F600}-x', '\uFFFF-y', '\u{10FFFF}\u{10FFFF}', 'e-1'];

interface Listed {
  id: string;
  createdAt: string;
}

/** Code point order, as both engines compare the ids (JavaScript's < compares UTF-16 units). */
function byCodePoint(a: string, b: string): number {
  const x = [...a].map((c) => c.codePointAt(0)!);
  const y = [...b].map((c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}
const listOrder = (a: Listed, b: Listed) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : byCodePoint(a.id, b.id));

describe.each(ENGINES)('the audience page queries on %s', (engine) => {
  let t: TestApp, tenant: Tenant;
  /** Every member of the tenant with its credentials' active providers, as the test made them. */
  const everyone: (Listed & { active: string[] })[] = [];

  async function connect(externalUserId: string, provider: string) {
    t.clock.advance(1);
    const now = iso(t.clock.now());
    await storeCredential(t.ctx, {
      accountId: tenant.accountId,
      serverId: tenant.serverId,
      externalUserId,
      provider,
      secret: { type: 'static', values: { apiKey: `sk-${provider}` } },
      actor: CLI_ACTOR,
      now,
    });
    const known = everyone.find((m) => m.id === externalUserId);
    if (known) known.active.push(provider);
    else everyone.push({ id: externalUserId, createdAt: now, active: [provider] });
  }

  beforeAll(async () => {
    ({ t, tenant } = await startWithTenant(engine));
    const db = t.ctx.store.db;
    // Members made in bulk by the database itself, each with a credential of "openai", so that filter
    // matches all of the audience. The credentials' secret is a placeholder: this suite never opens
    // one. The copies of the member's created_at and id are what migration 008 and the repository write.
    const series = numbersUpTo(engine, AUDIENCE);
    const time = secondsAfter2026(engine, sql`i`);
    const secret = placeholderBytes(engine);
    await sql`insert into audience_members (id, server_id, external_user_id, created_at, updated_at)
      select 'mem_' || i, ${tenant.serverId}, 'user-' || i, ${time}, '2026-01-01T00:00:00.000Z' from (${series}) as s`.execute(db);
    await db
      .insertInto('audience_members')
      .values(ZZ.map((z) => ({ id: `mem_${z.id}`, server_id: tenant.serverId, external_user_id: z.id, created_at: at(z.second), updated_at: at(z.second) })))
      .execute();
    await sql`insert into audience_members (id, server_id, external_user_id, created_at, updated_at)
      select 'mem_grp_' || i, ${tenant.serverId}, 'grp-' || i, ${time}, '2026-01-01T00:00:00.000Z' from (${series}) as s where i <= ${GROUP}`.execute(db);
    await db
      .insertInto('audience_members')
      .values(
        GROUP_LATE.map((second, n) => ({
          id: `mem_grp_late_${n}`,
          server_id: tenant.serverId,
          external_user_id: `grp-late-${n}`,
          created_at: at(second),
          updated_at: at(second),
        })),
      )
      .execute();
    const credentials = (provider: string, status: string, where: ReturnType<typeof sql>) =>
      sql`insert into credentials (id, server_id, member_id, provider, type, status, secret, connected_at, updated_at, member_created_at, external_user_id)
        select 'cred_' || ${provider} || substr(id, 4), server_id, id, ${provider}, 'static', ${status}, ${secret}, created_at, created_at, created_at, external_user_id
        from audience_members where server_id = ${tenant.serverId} and ${where}`.execute(db);
    await credentials('openai', 'active', sql`1 = 1`);
    await credentials('rare', 'active', sql`external_user_id in (${sql.join([...RARE_ACTIVE, ZZ_RARE])})`);
    await credentials('rare', 'needs_reauth', sql`external_user_id = ${RARE_NEEDS_REAUTH}`);
    for (let i = 1; i <= AUDIENCE; i++) {
      const id = `user-${i}`;
      everyone.push({ id, createdAt: at(i), active: ['openai', ...(RARE_ACTIVE.includes(id) ? ['rare'] : [])] });
    }
    for (const z of ZZ) everyone.push({ id: z.id, createdAt: at(z.second), active: ['openai', ...(z.id === ZZ_RARE ? ['rare'] : [])] });
    for (let i = 1; i <= GROUP; i++) everyone.push({ id: `grp-${i}`, createdAt: at(i), active: ['openai'] });
    for (const [n, second] of GROUP_LATE.entries()) everyone.push({ id: `grp-late-${n}`, createdAt: at(second), active: ['openai'] });
    // The rest through the services, as an API call makes them.
    for (const id of SPECIAL) await connect(id, id.startsWith('a') ? 'rare' : 'openai');
    await sql`analyze`.execute(db);
  });
  afterAll(() => t.close());

  /** The database's plan for one page of a plan (or for a statement), as text. */
  function explain(plan: PagePlan, filter: PageFilter, after: PagePosition | null, query?: Compilable): Promise<string> {
    return queryPlan(t.ctx.store, query ?? t.ctx.store.audience.pageQuery(plan, tenant.serverId, filter, after, 21));
  }

  const DEEP: PagePosition = [at(12_000), 'user-12000'];
  /** Not a scan, not a sort, and not a walk read whole before its first row is used. */
  const NO_SCAN_OR_SORT = /TEMP B-TREE|Sort|Seq Scan|SCAN [cmi]\b|MATERIALIZE w/i;

  describe('the plans', () => {
    it('walks the page index in order, with no sort, from the start and from deep in the audience', async () => {
      for (const after of [null, DEEP]) {
        const text = await explain('walk', {}, after);
        expect(text).toContain('audience_members_page');
        expect(text).not.toMatch(NO_SCAN_OR_SORT);
      }
    });

    it.each(['rare', 'openai'])('walks the provider index of active credentials in order for ?provider=%s', async (provider) => {
      expect(await t.ctx.store.audience.pagePlan(tenant.serverId, { provider })).toBe('walk');
      for (const after of [null, DEEP]) {
        const text = await explain('walk', { provider }, after);
        expect(text).toContain('credentials_provider_page');
        expect(text).not.toContain('audience_members_page');
        expect(text).not.toMatch(NO_SCAN_OR_SORT);
      }
    });

    it.each([
      ['zz-', 5],
      ['user-19', 1_111],
    ])('reads the range of the unique index and sorts only its matches for a prefix with few matches (%j, %i)', async (prefix, matches) => {
      expect(matches).toBeLessThanOrEqual(PREFIX_RANGE_LIMIT);
      expect(await t.ctx.store.audience.pagePlan(tenant.serverId, { prefix })).toBe('prefix-range');
      const counting = await explain('prefix-range', {}, null, t.ctx.store.audience.prefixMatchesQuery(tenant.serverId, prefix));
      expect(counting).toMatch(
        engine === 'sqlite'
          ? /SEARCH audience_members USING COVERING INDEX sqlite_autoindex_audience_members_\d \(server_id=\? AND external_user_id>\? AND external_user_id<\?\)/
          : /Index (Only )?Scan (using|on) audience_members_external_id/,
      );
      expect(counting).not.toMatch(/Seq Scan|SCAN audience_members\b|audience_members_page/);
      for (const filter of [{ prefix }, { prefix, provider: 'rare' }]) {
        const text = await explain('prefix-range', filter, DEEP);
        // The matches come from a range of the unique index (server_id, external_user_id)…
        if (engine === 'sqlite') {
          expect(text).toMatch(
            /SEARCH audience_members USING (COVERING )?INDEX sqlite_autoindex_audience_members_\d \(server_id=\? AND external_user_id>\? AND external_user_id<\?\)/,
          );
          expect(text).toMatch(/MATERIALIZE matches/);
          // …and only they are sorted: the sort reads the materialised set.
          expect(text).toMatch(/^SCAN m$/m);
          expect(text).toContain('USE TEMP B-TREE FOR ORDER BY');
          expect(text).not.toMatch(/SCAN audience_members\b|audience_members_page/);
        } else {
          expect(text).toMatch(
            /Index (Only )?Scan (using|on) audience_members_external_id[\s\S]*Index Cond: \(\(server_id = .*\) AND \(external_user_id >= .*\) AND \(external_user_id < .*\)\)/,
          );
          expect(text).toMatch(/Sort[\s\S]*CTE Scan on matches m/);
          expect(text).not.toMatch(/Seq Scan|audience_members_page/);
        }
        if (filter.provider) expect(text).not.toMatch(/SCAN c\b|Seq Scan on credentials/);
      }
    });

    it('walks an index in order for a prefix with many matches, checking the prefix row by row', async () => {
      // user-1, user-10…, user-100…, user-1000…, user-10000…: 11,111 matches.
      expect(await t.ctx.store.audience.pagePlan(tenant.serverId, { prefix: 'user-1' })).toBe('walk');
      expect(await t.ctx.store.audience.pagePlan(tenant.serverId, { prefix: 'user-1', provider: 'rare' })).toBe('walk');
      const alone = await explain('walk', { prefix: 'user-1' }, DEEP);
      expect(alone).toContain('audience_members_page');
      const both = await explain('walk', { prefix: 'user-1', provider: 'rare' }, DEEP);
      expect(both).toContain('credentials_provider_page');
      for (const text of [alone, both]) expect(text).not.toMatch(NO_SCAN_OR_SORT);
    });

    it('reads only the index while walking: the member rows are read for the page alone', async () => {
      const alone = await explain('walk', { prefix: 'user-1' }, DEEP);
      const both = await explain('walk', { prefix: 'user-1', provider: 'openai' }, DEEP);
      if (engine === 'sqlite') {
        expect(alone).toMatch(/SEARCH i USING COVERING INDEX audience_members_page/);
        expect(both).toMatch(/SEARCH i USING COVERING INDEX credentials_provider_page/);
      } else {
        expect(alone).toMatch(/Index Only Scan using audience_members_page on audience_members i/);
        expect(both).toMatch(/Index Only Scan using credentials_provider_page on credentials i/);
      }
    });
  });

  describe('the pages', () => {
    const expected = (filter: PageFilter) =>
      everyone
        .filter((m) => (!filter.provider || m.active.includes(filter.provider)) && (!filter.prefix || m.id.startsWith(filter.prefix)))
        .sort(listOrder)
        .map((m) => m.id);

    /** Follows nextCursor to the end through the service; `between` runs after each page. */
    async function walk(query: Omit<PageQuery, 'cursor'>, between?: (page: number) => Promise<void>): Promise<string[]> {
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 1_000; page++) {
        const result = await listMembers(t.ctx, tenant.serverId, { ...query, cursor });
        seen.push(...result.data.map((m) => m.externalUserId));
        if (!result.hasMore) {
          expect(result.nextCursor).toBeNull();
          return seen;
        }
        expect(result.data).toHaveLength(query.limit);
        cursor = result.nextCursor!;
        await between?.(page);
      }
      throw new Error('the pages never ended');
    }

    it.each<[string, PageFilter]>([
      ['a provider', { provider: 'rare' }],
      ['a prefix with few matches', { prefix: 'zz-' }],
      ['both', { prefix: 'zz-', provider: 'rare' }],
      ['a prefix whose only credential of the provider needs re-authorisation', { prefix: 'user-7000', provider: 'rare' }],
      ['a prefix with a thousand matches', { prefix: 'user-19' }],
      ['a prefix with a thousand matches, and a provider', { prefix: 'user-19', provider: 'openai' }],
      ['a prefix with many matches, and a provider', { prefix: 'user-1', provider: 'rare' }],
    ])('lists every match once, in order, across pages: %s', async (_, filter) => {
      const want = expected(filter);
      for (const limit of want.length > 50 ? [7, 100] : [1, 2, 100]) expect(await walk({ limit, ...filter })).toEqual(want);
    });

    it('lists the 11,111 matches of a prefix it walks for, in order', async () => {
      expect(await walk({ limit: 100, prefix: 'user-1' })).toEqual(expected({ prefix: 'user-1' }));
    });

    it.each<PageFilter>([{ prefix: 'grp-' }, { prefix: 'grp-', provider: 'openai' }])(
      'reads the range of a prefix with many matches when its walk gives up: %j',
      async (filter) => {
        expect(await t.ctx.store.audience.pagePlan(tenant.serverId, filter)).toBe('walk');
        const want = expected(filter);
        expect(want).toHaveLength(GROUP + GROUP_LATE.length);
        for (const limit of [7, 100]) expect(await walk({ limit, ...filter })).toEqual(want);
        // Past the first 2,500, the next match is further than a walk goes: the walk alone finds nothing…
        const past: PagePosition = [at(GROUP), `grp-${GROUP}`];
        expect(GROUP_LATE[0]! - GROUP).toBeGreaterThan(PREFIX_WALK_LIMIT);
        expect(await t.ctx.store.audience.pageQuery('walk', tenant.serverId, filter, past, 3).execute()).toEqual([]);
        // …and the page is found all the same.
        const page = await t.ctx.store.audience.pageOf(tenant.serverId, filter, past, 3);
        expect(page.map((r) => r.external_user_id)).toEqual(['grp-late-0', 'grp-late-1', 'grp-late-2']);
      },
    );

    it('keeps out a credential that needs re-authorisation', async () => {
      expect(expected({ provider: 'rare' })).not.toContain(RARE_NEEDS_REAUTH);
      expect(await walk({ limit: 20, provider: 'rare' })).toEqual([
        'user-3',
        'user-5000',
        'user-10000',
        'zz-3',
        'user-15000',
        'user-19999',
        'a%b',
        'a_b',
        'aXb',
      ]);
    });

    it.each([
      ['a%', ['a%b']],
      ['a_', ['a_b']],
      ['%', []],
      ['_', []],
      ['A', ['A%b']],
      ['a', ['a%b', 'a_b', 'aXb']],
      ['é', ['é-1', 'é-2']],
      ['É', ['É-1']],
      ['e', ['e-1']],
      ['\u{1F600}', ['\u{1F600}-x']],
      ['\uFFFF', ['\uFFFF-y']],
      ['\u{10FFFF}', ['\u{10FFFF}\u{10FFFF}']],
      ['\u{10FFFF}\u{10FFFF}', ['\u{10FFFF}\u{10FFFF}']],
    ])('matches the prefix %j exactly and case-sensitively, with either plan', async (prefix, want) => {
      expect(expected({ prefix })).toEqual(want);
      expect(await walk({ limit: 1, prefix })).toEqual(want);
      // From the last bulk member on, so that the walk reaches the members made through the services.
      const lastBulk: PagePosition = [at(AUDIENCE), `user-${AUDIENCE}`];
      for (const plan of ['walk', 'prefix-range'] as const) {
        const rows = await t.ctx.store.audience.pageQuery(plan, tenant.serverId, { prefix }, lastBulk, 100).execute();
        expect(rows.map((r) => r.external_user_id)).toEqual(want);
      }
    });

    it('continues from a cursor of another filter at the same place in the list', async () => {
      const unfiltered = await listMembers(t.ctx, tenant.serverId, { limit: expected({}).indexOf('user-10000') + 1 });
      expect(unfiltered.data.at(-1)!.externalUserId).toBe('user-10000');
      const cursor = unfiltered.nextCursor!;
      const rare = await listMembers(t.ctx, tenant.serverId, { limit: 4, provider: 'rare', cursor });
      expect(rare.data.map((m) => m.externalUserId)).toEqual(['zz-3', 'user-15000', 'user-19999', 'a%b']);
      const prefixed = await listMembers(t.ctx, tenant.serverId, { limit: 4, prefix: 'zz-', cursor });
      expect(prefixed.data.map((m) => m.externalUserId)).toEqual(['zz-3', 'zz-4', 'zz-5']);
      const both = await listMembers(t.ctx, tenant.serverId, { limit: 4, prefix: 'zz-', provider: 'rare', cursor });
      expect(both).toMatchObject({ data: [{ externalUserId: 'zz-3' }], hasMore: false, nextCursor: null });
    });

    it.each<[PageFilter, string]>([
      [{ provider: 'rare' }, 'late'],
      [{ prefix: 'zz-' }, 'zz-late'],
      [{ prefix: 'zz-', provider: 'openai' }, 'zz-late-openai'],
      [{ prefix: 'user-1', provider: 'rare' }, 'user-1-late'],
    ])('shows a member added while paging on a later page, skipping and repeating none: %j', async (filter, added) => {
      const before = expected(filter);
      const seen = await walk({ limit: 1, ...filter }, async (page) => {
        if (page === 0) await connect(added, filter.provider ?? 'openai');
      });
      expect(seen).toEqual([...before, added]);
    });
  });

  it('gives the first string past a prefix in code point order', () => {
    expect(prefixEnd('zz-')).toBe('zz.');
    expect(prefixEnd('a\uD7FF')).toBe('a\uE000');
    expect(prefixEnd('a\u{10FFFF}')).toBe('b');
    expect(prefixEnd('\uFFFF')).toBe('\u{10000}');
    expect(prefixEnd('\u{10FFFF}')).toBeNull();
  });
});
