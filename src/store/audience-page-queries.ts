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
 *   trade it for a walk of the page index), then filtered by position and provider, and sorted.
 */
import type { ExpressionBuilder } from 'kysely';
import type { Db } from './connections.js';
import type { Database } from './schema.js';

/** A place in the list's order: a member's (created_at, external_user_id). */
export type PagePosition = readonly [createdAt: string, externalUserId: string];

export interface PageFilter {
  /** Only members with an active credential of this provider. */
  provider?: string;
  /** Only members whose external id starts with this (exactly: case-sensitive, % and _ are plain characters). */
  prefix?: string;
}

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

/**
 * The positions of the walk's index from `after` on, in list order: the audience's page index, or
 * the provider's index of active credentials (a credential that needs re-authorisation is outside
 * its range).
 */
function walkedIndex(db: Db, serverId: string, provider: string | undefined, after: PagePosition | null) {
  if (provider === undefined) {
    let walk = db.selectFrom('audience_members as i').select(['i.created_at', 'i.external_user_id']).where('i.server_id', '=', serverId);
    if (after) walk = walk.where((eb) => eb(eb.refTuple('i.created_at', 'i.external_user_id'), '>', eb.tuple(after[0], after[1])));
    return walk.orderBy('i.created_at').orderBy('i.external_user_id');
  }
  let walk = db
    .selectFrom('credentials as i')
    .select(['i.member_created_at as created_at', 'i.external_user_id'])
    .where('i.server_id', '=', serverId)
    .where('i.provider', '=', provider)
    .where('i.status', '=', 'active');
  if (after) walk = walk.where((eb) => eb(eb.refTuple('i.member_created_at', 'i.external_user_id'), '>', eb.tuple(after[0], after[1])));
  return walk.orderBy('i.member_created_at').orderBy('i.external_user_id');
}

/** Up to `rows` members from the walk (with a prefix, within its first PREFIX_WALK_LIMIT entries). */
export function walkPageQuery(db: Db, serverId: string, filter: PageFilter, after: PagePosition | null, rows: number) {
  const { prefix } = filter;
  const walked = walkedIndex(db, serverId, filter.provider, after).limit(prefix ? PREFIX_WALK_LIMIT : rows);
  let page = db
    .selectFrom(walked.as('w'))
    .innerJoin('audience_members as m', (join) => join.on('m.server_id', '=', serverId).onRef('m.external_user_id', '=', 'w.external_user_id'))
    .select(['m.id', 'w.external_user_id', 'w.created_at', 'm.updated_at']);
  if (prefix) page = page.where((eb) => eb(eb.fn('substr', ['w.external_user_id', eb.val(1), eb.val(codePoints(prefix))]), '=', prefix));
  return page.orderBy('w.created_at').orderBy('w.external_user_id').limit(rows);
}

/** Whether the walk's index holds more than PREFIX_WALK_LIMIT entries after the position (reads that many, from the index alone). */
export function walkGoesOnQuery(db: Db, serverId: string, provider: string | undefined, after: PagePosition | null) {
  return walkedIndex(db, serverId, provider, after).limit(1).offset(PREFIX_WALK_LIMIT);
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
          .select(['id', 'external_user_id', 'created_at', 'updated_at'])
          .where(inPrefixRange(serverId, prefix))
          .where((eb) => eb(eb.fn('substr', ['external_user_id', eb.val(1), eb.val(codePoints(prefix))]), '=', prefix)),
    )
    .selectFrom('matches as m')
    .select(['m.id', 'm.external_user_id', 'm.created_at', 'm.updated_at']);
  if (after) page = page.where((eb) => eb(eb.refTuple('m.created_at', 'm.external_user_id'), '>', eb.tuple(after[0], after[1])));
  if (provider) {
    page = page.where(({ exists, selectFrom }) =>
      exists(
        selectFrom('credentials as c').select('c.id').whereRef('c.member_id', '=', 'm.id').where('c.provider', '=', provider).where('c.status', '=', 'active'),
      ),
    );
  }
  return page.orderBy('m.created_at').orderBy('m.external_user_id').limit(rows);
}
