/**
 * The statements that find a page of a server's audience in the list's order (created_at, then
 * external_user_id: CONTRACT 2.5) at any audience size, with the provider and prefix filters. The
 * audience repository chooses among them (AudienceRepository.pageOf).
 *
 * - A walk: an index already in list order is read from the position on, and stops at the page's
 *   end. Without a provider it is the page index of the audience (server_id, created_at,
 *   external_user_id); with one, that provider's index of active credentials (server_id, provider,
 *   status, member_created_at, external_user_id), on copies of the member's created_at and id that
 *   never change. Only index columns are read while walking (covering on both engines); the member
 *   rows of the page's few rows are joined after. A prefix is checked on each entry, and then the
 *   walk gives up after PREFIX_WALK_LIMIT entries (the caller goes on with the prefix range).
 * - The prefix range: the ids that start with a prefix are one range of the unique index
 *   (server_id, external_user_id); read whole into a materialised set (so that the database cannot
 *   trade it for a walk of the page index), then filtered by position, provider and tags, and sorted.
 *
 * Tags (`tag=key:value`, all must match: CONTRACT 10): a walk may also read one tag's index
 * (server_id, tag_key, tag_value, member_created_at, external_user_id) of audience_member_tags
 * (migration 019), in the same order on the same copies. The index walked (WalkIndex) is one of the
 * filter's tags or its provider, whichever the repository found the fewest entries of; every other
 * tag, and the provider, is checked on each entry by one lookup of its own index at that entry's
 * (created_at, external_user_id). Without a prefix those checks are part of the walk, which stops at
 * the page's end; with one they are made beside the prefix's check, on the walk's first
 * PREFIX_WALK_LIMIT entries.
 */
import { type Expression, type ExpressionBuilder, type SqlBool, sql } from 'kysely';
import type { Db } from './connections.js';
import type { Database } from './schema.js';

/** A place in the list's order: a member's (created_at, external_user_id). */
export type PagePosition = readonly [createdAt: string, externalUserId: string];

/** One `tag=key:value` of the list: the member carries the tag `key` with exactly this value. */
export interface TagMatch {
  key: string;
  value: string;
}

export interface PageFilter {
  /** Only members with an active credential of this provider. */
  provider?: string;
  /** Only members whose external id starts with this (exactly: case-sensitive, % and _ are plain characters). */
  prefix?: string;
  /** Only members that carry every one of these tags (exactly: case-sensitive). */
  tags?: readonly TagMatch[];
}

/**
 * The index a walk reads in list order: the audience's page index, a provider's index of active
 * credentials, or one tag's range of audience_member_tags_page.
 */
export type WalkIndex = { kind: 'audience' } | { kind: 'provider'; provider: string } | { kind: 'tag'; tag: TagMatch };

/** The filter's candidates for the walk: each tag, then the provider (empty: the audience's page index). */
export function walkCandidates(filter: PageFilter): WalkIndex[] {
  return [
    ...(filter.tags ?? []).map((tag): WalkIndex => ({ kind: 'tag', tag })),
    ...(filter.provider === undefined ? [] : [{ kind: 'provider', provider: filter.provider } as const]),
  ];
}

/** The index walked where nobody counted: the first candidate, else the audience's page index. */
export function firstWalkIndex(filter: PageFilter): WalkIndex {
  return walkCandidates(filter)[0] ?? { kind: 'audience' };
}

/**
 * Up to this many entries of each candidate's index are counted when a filter has several (two tags,
 * or a tag and a provider): the walk reads the one with the fewest, so that a rare tag or provider is
 * not looked for along a common one (`npm run bench:list` compares such pages at 1k and 1M members).
 */
export const WALK_COUNT_LIMIT = 1_000;

/**
 * Up to this many members matching a prefix are read from its range and sorted, whatever the
 * audience's size; past it, a walk is tried first (bench/RESULTS.md has the measured costs).
 */
export const PREFIX_RANGE_LIMIT = 2_000;

/** A walk checking a prefix gives up after this many entries of its index without a full page. */
export const PREFIX_WALK_LIMIT = 10_000;

/** Characters as both engines' substr() counts them: code points. */
function codePoints(text: string): number {
  return [...text].length;
}

const MAX_CODE_POINT = 0x10ffff;

/**
 * The first string past every string that starts with `prefix`, in code point order (the order of
 * both engines' comparisons: SQLite's BINARY and PostgreSQL's "C" compare UTF-8 bytes); null where
 * there is none (a prefix of U+10FFFF only). A lone surrogate counts as U+FFFD, as both drivers
 * send it.
 */
export function prefixEnd(prefix: string): string | null {
  const points = [...prefix].map((c) => {
    const point = c.codePointAt(0)!;
    return point >= 0xd800 && point <= 0xdfff ? 0xfffd : point;
  });
  while (points.length > 0) {
    const last = points.pop()!;
    if (last === MAX_CODE_POINT) continue;
    // The next scalar value: surrogates are not characters.
    points.push(last + 1 === 0xd800 ? 0xe000 : last + 1);
    return String.fromCodePoint(...points);
  }
  return null;
}

/** The range of the unique index (server_id, external_user_id) that holds exactly the ids starting with the prefix. */
function inPrefixRange(serverId: string, prefix: string) {
  const end = prefixEnd(prefix);
  return (eb: ExpressionBuilder<Database, 'audience_members'>) =>
    eb.and([eb('server_id', '=', serverId), eb('external_user_id', '>=', prefix), ...(end === null ? [] : [eb('external_user_id', '<', end)])]);
}

/**
 * How many members' ids start with the prefix, counted on the unique index up to one past
 * PREFIX_RANGE_LIMIT (reading the id itself, so the index alone answers: no table row is read).
 */
export function prefixMatchesQuery(db: Db, serverId: string, prefix: string) {
  return db
    .selectFrom((sub) =>
      sub
        .selectFrom('audience_members')
        .select('external_user_id')
        .where(inPrefixRange(serverId, prefix))
        .limit(PREFIX_RANGE_LIMIT + 1)
        .as('m'),
    )
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('matches'));
}

/** A position's two columns, as a walked index or the member rows name them. */
type PositionColumns = readonly [createdAt: string, externalUserId: string];

/**
 * The entries of the walk's index from `after` on, in list order, as (created_at, external_user_id):
 * the audience's page index, the provider's index of active credentials (a credential that needs
 * re-authorisation is outside its range), or one tag's range. `checks` are ANDed to it.
 */
function walkedIndex(db: Db, serverId: string, index: WalkIndex, after: PagePosition | null, checks: readonly Check[] = []) {
  const checked = (columns: PositionColumns) => allOf(checks, columns);
  if (index.kind === 'audience') {
    let walk = db.selectFrom('audience_members as i').select(['i.created_at', 'i.external_user_id']).where('i.server_id', '=', serverId);
    if (after) walk = walk.where((eb) => eb(eb.refTuple('i.created_at', 'i.external_user_id'), '>', eb.tuple(after[0], after[1])));
    if (checks.length) walk = walk.where(checked(['i.created_at', 'i.external_user_id']));
    return walk.orderBy('i.created_at').orderBy('i.external_user_id');
  }
  if (index.kind === 'tag') {
    let walk = db
      .selectFrom('audience_member_tags as i')
      .select(['i.member_created_at as created_at', 'i.external_user_id'])
      .where('i.server_id', '=', serverId)
      .where('i.tag_key', '=', index.tag.key)
      .where('i.tag_value', '=', index.tag.value);
    if (after) walk = walk.where((eb) => eb(eb.refTuple('i.member_created_at', 'i.external_user_id'), '>', eb.tuple(after[0], after[1])));
    if (checks.length) walk = walk.where(checked(['i.member_created_at', 'i.external_user_id']));
    return walk.orderBy('i.member_created_at').orderBy('i.external_user_id');
  }
  let walk = db
    .selectFrom('credentials as i')
    .select(['i.member_created_at as created_at', 'i.external_user_id'])
    .where('i.server_id', '=', serverId)
    .where('i.provider', '=', index.provider)
    .where('i.status', '=', 'active');
  if (after) walk = walk.where((eb) => eb(eb.refTuple('i.member_created_at', 'i.external_user_id'), '>', eb.tuple(after[0], after[1])));
  if (checks.length) walk = walk.where(checked(['i.member_created_at', 'i.external_user_id']));
  return walk.orderBy('i.member_created_at').orderBy('i.external_user_id');
}

/**
 * One filter checked at a member's position (its created_at and external id, as the query at hand
 * names them): an EXISTS of one index entry. Its OFFSET 0 (after a LIMIT 1, which SQLite's grammar
 * wants) keeps PostgreSQL from turning the EXISTS into a join, which it may then plan from the other
 * side (every entry of the checked tag, hashed or sorted, then a sort) on a misjudged estimate: as a
 * subplan it is one index lookup per entry walked, as on SQLite.
 */
type Check = (position: PositionColumns) => Expression<SqlBool>;

/** Every check at the position. */
function allOf(checks: readonly Check[], position: PositionColumns): Expression<SqlBool> {
  return sql<SqlBool>`(${sql.join(
    checks.map((check) => check(position)),
    sql` and `,
  )})`;
}

/** The member at the position carries the tag: one lookup of audience_member_tags_page. */
function carriesTag(db: Db, serverId: string, tag: TagMatch): Check {
  return ([createdAt, externalUserId]) =>
    sql<SqlBool>`exists ${db
      .selectFrom('audience_member_tags as t')
      .select(sql.lit(1).as('found'))
      .where('t.server_id', '=', serverId)
      .where('t.tag_key', '=', tag.key)
      .where('t.tag_value', '=', tag.value)
      .where('t.member_created_at', '=', sql.ref<string>(createdAt))
      .where('t.external_user_id', '=', sql.ref<string>(externalUserId))
      .limit(1)
      .offset(0)}`;
}

/** The member at the position has an active credential of the provider: one lookup of credentials_provider_page. */
function holdsProvider(db: Db, serverId: string, provider: string): Check {
  return ([createdAt, externalUserId]) =>
    sql<SqlBool>`exists ${db
      .selectFrom('credentials as c')
      .select(sql.lit(1).as('found'))
      .where('c.server_id', '=', serverId)
      .where('c.provider', '=', provider)
      .where('c.status', '=', 'active')
      .where('c.member_created_at', '=', sql.ref<string>(createdAt))
      .where('c.external_user_id', '=', sql.ref<string>(externalUserId))
      .limit(1)
      .offset(0)}`;
}

/** What the walked index does not settle itself: every tag but the walked one, and the provider unless it is the one walked. */
function checksBeside(db: Db, serverId: string, filter: PageFilter, index: WalkIndex): Check[] {
  const walked = (tag: TagMatch) => index.kind === 'tag' && tag.key === index.tag.key && tag.value === index.tag.value;
  const checks = (filter.tags ?? []).filter((tag) => !walked(tag)).map((tag) => carriesTag(db, serverId, tag));
  if (filter.provider !== undefined && index.kind !== 'provider') checks.push(holdsProvider(db, serverId, filter.provider));
  return checks;
}

/** How many entries the candidate's index holds, counted up to `upTo` (at most one past WALK_COUNT_LIMIT), from the index alone. */
export function walkEntriesQuery(db: Db, serverId: string, index: WalkIndex, upTo = WALK_COUNT_LIMIT + 1) {
  // In the index's order, so that neither engine trades the range for a scan that stops at the limit.
  const entries = walkedIndex(db, serverId, index, null).limit(Math.min(upTo, WALK_COUNT_LIMIT + 1));
  return db.selectFrom(entries.as('e')).select((eb) => eb.fn.countAll<number | string | bigint>().as('entries'));
}

/**
 * Up to `rows` members from the walk of `index`. Without a prefix the other filters are checked as
 * the walk goes, and it stops at the page's end; with one, it reads at most PREFIX_WALK_LIMIT entries
 * and the prefix and the other filters are checked on those.
 */
export function walkPageQuery(
  db: Db,
  serverId: string,
  filter: PageFilter,
  after: PagePosition | null,
  rows: number,
  index: WalkIndex = firstWalkIndex(filter),
) {
  const { prefix } = filter;
  const checks = checksBeside(db, serverId, filter, index);
  const walked = prefix ? walkedIndex(db, serverId, index, after).limit(PREFIX_WALK_LIMIT) : walkedIndex(db, serverId, index, after, checks).limit(rows);
  let page = db
    .selectFrom(walked.as('w'))
    .innerJoin('audience_members as m', (join) => join.on('m.server_id', '=', serverId).onRef('m.external_user_id', '=', 'w.external_user_id'))
    .select(['m.id', 'w.external_user_id', 'w.created_at', ...PROFILE_COLUMNS]);
  if (prefix) {
    page = page.where((eb) => eb(eb.fn('substr', ['w.external_user_id', eb.val(1), eb.val(codePoints(prefix))]), '=', prefix));
    if (checks.length) page = page.where(allOf(checks, ['w.created_at', 'w.external_user_id']));
  }
  return page.orderBy('w.created_at').orderBy('w.external_user_id').limit(rows);
}

/** What a page shows of each member besides its position: the row's id, its last update and its profile (migration 019). */
const PROFILE_COLUMNS = ['m.updated_at', 'm.display_name', 'm.email', 'm.tags'] as const;

/** Whether the walk's index holds more than PREFIX_WALK_LIMIT entries after the position (reads that many, from the index alone). */
export function walkGoesOnQuery(db: Db, serverId: string, index: WalkIndex, after: PagePosition | null) {
  return walkedIndex(db, serverId, index, after).limit(1).offset(PREFIX_WALK_LIMIT);
}

/** Up to `rows` members whose id starts with the prefix, from its range of the unique index, sorted. */
export function prefixRangePageQuery(db: Db, serverId: string, filter: PageFilter & { prefix: string }, after: PagePosition | null, rows: number) {
  const { prefix, provider } = filter;
  let page = db
    .with(
      (cte) => cte('matches').materialized(),
      (sub) =>
        sub
          .selectFrom('audience_members')
          .select(['id', 'external_user_id', 'created_at', 'updated_at', 'display_name', 'email', 'tags'])
          .where(inPrefixRange(serverId, prefix))
          .where((eb) => eb(eb.fn('substr', ['external_user_id', eb.val(1), eb.val(codePoints(prefix))]), '=', prefix)),
    )
    .selectFrom('matches as m')
    .select(['m.id', 'm.external_user_id', 'm.created_at', ...PROFILE_COLUMNS]);
  if (after) page = page.where((eb) => eb(eb.refTuple('m.created_at', 'm.external_user_id'), '>', eb.tuple(after[0], after[1])));
  if (provider) {
    page = page.where(({ exists, selectFrom }) =>
      exists(
        selectFrom('credentials as c').select('c.id').whereRef('c.member_id', '=', 'm.id').where('c.provider', '=', provider).where('c.status', '=', 'active'),
      ),
    );
  }
  const tagChecks = (filter.tags ?? []).map((tag) => carriesTag(db, serverId, tag));
  if (tagChecks.length) page = page.where(allOf(tagChecks, ['m.created_at', 'm.external_user_id']));
  return page.orderBy('m.created_at').orderBy('m.external_user_id').limit(rows);
}
