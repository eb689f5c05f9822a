/**
 * The list's `tag=key:value` filter "as flat at a million members as the other filters" (CONTRACT 10,
 * 2.5): on a large audience, a page of one tag walks that tag's index in list order, and every other
 * tag or the provider is one lookup of its own index per entry; never a scan or a sort of the
 * audience, on both engines. With two candidates, the walk takes the one with fewer entries. Then the
 * pages themselves: order, cursors, tags with provider and prefix.
 */
import { type Compilable, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listMembers, type PageQuery } from '../../src/services/audience/members.js';
import { WALK_COUNT_LIMIT } from '../../src/store/audience-page-queries.js';
import type { PageFilter, PagePosition, WalkIndex } from '../../src/store/audience-repository.js';
import { ENGINES } from '../helpers/databases.js';
import { queryPlan } from '../helpers/query-plans.js';
import { numbersUpTo, placeholderBytes, secondsAfter2026 } from '../helpers/sql-fill.js';
import { startWithTenant, type Tenant, type TestApp } from '../helpers/test-app.js';

const AUDIENCE = 20_000;
const BASE = Date.UTC(2026, 0, 1);
const at = (second: number) => new Date(BASE + second * 1000).toISOString();

/**
 * Member i (user-i, made at second i) carries plan:pro where i is even (else plan:free), region:eu
 * where i is a multiple of 50, and cohort:rare for the five below; every member has an active openai
 * credential, and the five RARE_PROVIDER members one of "rare" too.
 */
const COHORT = [7, 4_000, 9_000, 14_000, 19_998];
const RARE_PROVIDER = [10, 5_000, 10_050, 15_000, 19_950];
const tagsOf = (i: number): Record<string, string> => ({
  plan: i % 2 === 0 ? 'pro' : 'free',
  ...(i % 50 === 0 ? { region: 'eu' } : {}),
  ...(COHORT.includes(i) ? { cohort: 'rare' } : {}),
});

const tag = (key: string, value: string): WalkIndex => ({ kind: 'tag', tag: { key, value } });

describe.each(ENGINES)('the tag filter’s page queries on %s', (engine) => {
  let t: TestApp, tenant: Tenant;

  beforeAll(async () => {
    ({ t, tenant } = await startWithTenant(engine));
    const db = t.ctx.store.db;
    // Members, their tags (and the JSON copy on the member row) and credentials, made in bulk by the
    // database itself, with the copies of the member's created_at and id that migrations 008 and 019 add.
    const series = numbersUpTo(engine, AUDIENCE);
    const time = secondsAfter2026(engine, sql`i`);
    const secret = placeholderBytes(engine);
    await sql`insert into audience_members (id, server_id, external_user_id, created_at, updated_at)
      select 'mem_' || i, ${tenant.serverId}, 'user-' || i, ${time}, '2026-01-01T00:00:00.000Z' from (${series}) as s`.execute(db);
    const number = engine === 'sqlite' ? sql`cast(substr(id, 5) as integer)` : sql`cast(substr(id, 5) as integer)`;
    const tags = (key: string, value: ReturnType<typeof sql>, where: ReturnType<typeof sql>) =>
      sql`insert into audience_member_tags (member_id, server_id, tag_key, tag_value, member_created_at, external_user_id)
        select id, server_id, ${key}, ${value}, created_at, external_user_id from audience_members where server_id = ${tenant.serverId} and ${where}`.execute(
        db,
      );
    await tags('plan', sql`case when ${number} % 2 = 0 then 'pro' else 'free' end`, sql`1 = 1`);
    await tags('region', sql`'eu'`, sql`${number} % 50 = 0`);
    await tags('cohort', sql`'rare'`, sql`id in (${sql.join(COHORT.map((i) => `mem_${i}`))})`);
    const credentials = (provider: string, where: ReturnType<typeof sql>) =>
      sql`insert into credentials (id, server_id, member_id, provider, type, status, secret, connected_at, updated_at, member_created_at, external_user_id)
        select 'cred_' || ${provider} || substr(id, 4), server_id, id, ${provider}, 'static', 'active', ${secret}, created_at, created_at, created_at, external_user_id
        from audience_members where server_id = ${tenant.serverId} and ${where}`.execute(db);
    await credentials('openai', sql`1 = 1`);
    await credentials('rare', sql`id in (${sql.join(RARE_PROVIDER.map((i) => `mem_${i}`))})`);
    await sql`analyze`.execute(db);
  });
  afterAll(() => t.close());

  function explain(filter: PageFilter, after: PagePosition | null, index: WalkIndex, query?: Compilable): Promise<string> {
    return queryPlan(t.ctx.store, query ?? t.ctx.store.audience.pageQuery('walk', tenant.serverId, filter, after, 21, index));
  }

  const DEEP: PagePosition = [at(12_000), 'user-12000'];
  /** Not a scan, not a sort, not a hash of a whole index, and not a walk read whole before its first row is used. */
  const NO_SCAN_OR_SORT = /TEMP B-TREE|Sort|Seq Scan|SCAN [cimt]\b|MATERIALIZE w|Hash|Bitmap/i;
  /** The walk reads a tag's range of its index (from the index alone). */
  const WALKS_TAG =
    engine === 'sqlite'
      ? /SEARCH i USING COVERING INDEX audience_member_tags_page \(server_id=\? AND tag_key=\? AND tag_value=\?/
      : /Index Only Scan using audience_member_tags_page on audience_member_tags i/;
  /** Another tag is one lookup of its index at the entry's position. */
  const LOOKS_UP_TAG =
    engine === 'sqlite'
      ? /SEARCH t (EXISTS )?USING COVERING INDEX audience_member_tags_page \(server_id=\? AND tag_key=\? AND tag_value=\? AND member_created_at=\? AND external_user_id=\?\)/
      : /Index Only Scan using audience_member_tags_page on audience_member_tags t[\s\S]*Index Cond: \(\(server_id = .*\) AND \(tag_key = .*\) AND \(tag_value = .*\) AND \(member_created_at = \w+\.(member_)?created_at\) AND \(external_user_id = \w+\.external_user_id\)\)/;
  const LOOKS_UP_PROVIDER =
    engine === 'sqlite'
      ? /SEARCH c (EXISTS )?USING COVERING INDEX credentials_provider_page \(server_id=\? AND provider=\? AND status=\? AND member_created_at=\? AND external_user_id=\?\)/
      : /Index Only Scan using credentials_provider_page on credentials c[\s\S]*Index Cond: \(\(server_id = .*\) AND \(provider = .*\) AND \(status = .*\) AND \(member_created_at = \w+\.member_created_at\) AND \(external_user_id = \w+\.external_user_id\)\)/;

  describe('the plans', () => {
    it('walks one tag’s index in order, with no sort, from the start and from deep in the audience', async () => {
      for (const after of [null, DEEP]) {
        const text = await explain({ tags: [{ key: 'plan', value: 'pro' }] }, after, tag('plan', 'pro'));
        expect(text, text).toMatch(WALKS_TAG);
        expect(text, text).not.toMatch(/audience_members_page|credentials_provider_page/);
        expect(text, text).not.toMatch(NO_SCAN_OR_SORT);
      }
    });

    it.each<[string, PageFilter, WalkIndex, RegExp]>([
      [
        'a second tag',
        {
          tags: [
            { key: 'plan', value: 'pro' },
            { key: 'region', value: 'eu' },
          ],
        },
        tag('plan', 'pro'),
        LOOKS_UP_TAG,
      ],
      [
        'a common tag beside a rare one',
        {
          tags: [
            { key: 'plan', value: 'pro' },
            { key: 'cohort', value: 'rare' },
          ],
        },
        tag('cohort', 'rare'),
        LOOKS_UP_TAG,
      ],
      ['a provider', { tags: [{ key: 'plan', value: 'pro' }], provider: 'openai' }, tag('plan', 'pro'), LOOKS_UP_PROVIDER],
    ])('checks %s by one lookup of its index per entry of the walk', async (_, filter, index, lookup) => {
      for (const after of [null, DEEP]) {
        const text = await explain(filter, after, index);
        expect(text, text).toMatch(WALKS_TAG);
        expect(text, text).toMatch(lookup);
        expect(text, text).not.toMatch(NO_SCAN_OR_SORT);
        // One lookup: the walked tag is not checked again.
        expect(text.match(/SEARCH [ct] |Index Only Scan using \w+ on \w+ [ct]\b/g), text).toHaveLength(1);
      }
    });

    it('walks the provider’s index and looks the tag up when the provider is rarer', async () => {
      const filter: PageFilter = { tags: [{ key: 'plan', value: 'pro' }], provider: 'rare' };
      expect(await t.ctx.store.audience.walkIndex(tenant.serverId, filter)).toEqual({ kind: 'provider', provider: 'rare' });
      const text = await explain(filter, DEEP, { kind: 'provider', provider: 'rare' });
      expect(text, text).toMatch(
        engine === 'sqlite' ? /SEARCH i USING COVERING INDEX credentials_provider_page/ : /Index Only Scan using credentials_provider_page on credentials i/,
      );
      expect(text, text).toMatch(LOOKS_UP_TAG);
      expect(text, text).not.toMatch(NO_SCAN_OR_SORT);
    });

    it.each<[PageFilter, WalkIndex]>([
      [{ tags: [{ key: 'plan', value: 'pro' }] }, tag('plan', 'pro')],
      [
        {
          tags: [
            { key: 'plan', value: 'pro' },
            { key: 'cohort', value: 'rare' },
          ],
        },
        tag('cohort', 'rare'),
      ],
      [
        {
          tags: [
            { key: 'region', value: 'eu' },
            { key: 'plan', value: 'pro' },
          ],
        },
        tag('region', 'eu'),
      ],
      [{ tags: [{ key: 'plan', value: 'pro' }], provider: 'openai' }, tag('plan', 'pro')],
      [{ tags: [{ key: 'cohort', value: 'rare' }], provider: 'rare' }, tag('cohort', 'rare')],
      [
        {
          tags: [
            { key: 'plan', value: 'pro' },
            { key: 'nobody', value: 'x' },
          ],
        },
        tag('nobody', 'x'),
      ],
    ])('walks the candidate with the fewest entries: %j', async (filter, index) => {
      expect(await t.ctx.store.audience.walkIndex(tenant.serverId, filter)).toEqual(index);
    });

    it('counts a candidate’s entries from its index alone, stopping past the limit', async () => {
      const counting = await explain({}, null, tag('plan', 'pro'), t.ctx.store.audience.walkEntriesQuery(tenant.serverId, tag('plan', 'pro')));
      expect(counting, counting).toMatch(WALKS_TAG);
      expect(counting, counting).not.toMatch(NO_SCAN_OR_SORT);
      const { entries } = await t.ctx.store.audience.walkEntriesQuery(tenant.serverId, tag('plan', 'pro')).executeTakeFirstOrThrow();
      expect(Number(entries)).toBe(WALK_COUNT_LIMIT + 1);
    });

    it('checks tags by lookup in a prefix’s range, and beside the prefix in a walk', async () => {
      const filter: PageFilter = { prefix: 'user-19', tags: [{ key: 'plan', value: 'pro' }] };
      expect(await t.ctx.store.audience.pagePlan(tenant.serverId, filter)).toBe('prefix-range');
      const range = await queryPlan(t.ctx.store, t.ctx.store.audience.pageQuery('prefix-range', tenant.serverId, filter, DEEP, 21));
      expect(range, range).toMatch(LOOKS_UP_TAG);
      expect(range, range).not.toMatch(/Seq Scan|SCAN (audience_members|t)\b|audience_members_page/);
      const walk = await explain(
        {
          prefix: 'user-1',
          tags: [
            { key: 'plan', value: 'pro' },
            { key: 'region', value: 'eu' },
          ],
        },
        DEEP,
        tag('plan', 'pro'),
      );
      expect(walk, walk).toMatch(WALKS_TAG);
      expect(walk, walk).toMatch(LOOKS_UP_TAG);
      expect(walk, walk).not.toMatch(/TEMP B-TREE|Sort|Seq Scan|SCAN [cimt]\b|Hash|Bitmap/);
    });
  });

  describe('the pages', () => {
    const expected = (filter: PageFilter) => {
      const ids: string[] = [];
      for (let i = 1; i <= AUDIENCE; i++) {
        const tags = tagsOf(i);
        const id = `user-${i}`;
        if (!(filter.tags ?? []).every(({ key, value }) => tags[key] === value)) continue;
        if (filter.provider === 'rare' && !RARE_PROVIDER.includes(i)) continue;
        if (filter.prefix && !id.startsWith(filter.prefix)) continue;
        ids.push(id);
      }
      return ids;
    };

    async function walk(query: Omit<PageQuery, 'cursor'>): Promise<string[]> {
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 1_000; page++) {
        const result = await listMembers(t.ctx, tenant.serverId, { ...query, cursor });
        seen.push(...result.data.map((m) => m.externalUserId));
        if (!result.hasMore) return seen;
        expect(result.data).toHaveLength(query.limit);
        cursor = result.nextCursor!;
      }
      throw new Error('the pages never ended');
    }
    const tagQuery = (filter: PageFilter) => ({
      tag: (filter.tags ?? []).map(({ key, value }) => `${key}:${value}`),
      provider: filter.provider,
      prefix: filter.prefix,
    });

    it.each<[string, PageFilter]>([
      [
        'two tags',
        {
          tags: [
            { key: 'plan', value: 'pro' },
            { key: 'region', value: 'eu' },
          ],
        },
      ],
      [
        'a rare tag and a common one',
        {
          tags: [
            { key: 'plan', value: 'pro' },
            { key: 'cohort', value: 'rare' },
          ],
        },
      ],
      ['a tag and a rare provider', { tags: [{ key: 'plan', value: 'pro' }], provider: 'rare' }],
      ['a tag and a prefix with few matches', { tags: [{ key: 'plan', value: 'pro' }], prefix: 'user-19' }],
      [
        'two tags and a prefix with many matches',
        {
          tags: [
            { key: 'plan', value: 'pro' },
            { key: 'region', value: 'eu' },
          ],
          prefix: 'user-1',
        },
      ],
    ])('lists every match once, in order, across pages: %s', async (_, filter) => {
      const want = expected(filter);
      expect(want.length).toBeGreaterThan(0);
      for (const limit of [7, 100]) expect(await walk({ limit, ...tagQuery(filter) })).toEqual(want);
    });

    it('lists a common tag’s 10,000 members in order', async () => {
      const filter: PageFilter = { tags: [{ key: 'plan', value: 'pro' }] };
      expect(await walk({ limit: 100, ...tagQuery(filter) })).toEqual(expected(filter));
    });
  });
});
