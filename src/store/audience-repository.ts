/**
 * The audience of business-mode servers: its members (audience_members), their profiles and the
 * pages of the list; and the two reads of a member with its credentials, each one statement on
 * purpose (memberWithCredentials, memberCredentialForProxy; the latter's row and its statement for
 * calls asked together are proxy-reads.ts's). The credentials' own rows are credentials-repository.ts's.
 */
import { sql } from 'kysely';
import { newId } from '../primitives/ids.js';
import {
  firstWalkIndex,
  type PageFilter,
  type PagePosition,
  PREFIX_RANGE_LIMIT,
  prefixMatchesQuery,
  prefixRangePageQuery,
  type TagMatch,
  WALK_COUNT_LIMIT,
  type WalkIndex,
  walkCandidates,
  walkEntriesQuery,
  walkGoesOnQuery,
  walkPageQuery,
} from './audience-page-queries.js';
import type { Connections } from './connections.js';
import { CREDENTIAL_COLUMNS } from './credentials-repository.js';
import { asText, preparedQuery } from './prepared.js';
import { type MemberCredentialForProxy, memberOf, type ProxyReadArgs, proxyReadBytes, proxyReadOf, proxyReadsTogether } from './proxy-reads.js';
import { type KeptBounds, ReadsUntilChange } from './reads-until-change.js';
import { Repository } from './repository.js';
import type { CredentialRow } from './schema.js';
import type { StatementsTogether } from './statements-together.js';

export type { PageFilter, PagePosition, TagMatch, WalkIndex } from './audience-page-queries.js';
export type { MemberCredentialForProxy } from './proxy-reads.js';

/**
 * How a page is found (audience-page-queries.ts): a walk of an index in list order, or, for a prefix
 * that at most PREFIX_RANGE_LIMIT members' ids start with, that prefix's range read whole and sorted.
 */
export type PagePlan = 'walk' | 'prefix-range';

/** A member's profile as stored (migration 019): `tags` is the JSON object of its tags, null where it has none. */
export interface StoredProfile {
  display_name: string | null;
  email: string | null;
  tags: string | null;
}

/**
 * Proxied calls' reads kept while nothing is committed (reads-until-change.ts): one per (server, provider, end user)
 * with a credential in use, 10,000 at most and 32 MiB at most (a read of short values counts ~3 KiB,
 * so the first bound is the one met). A read's size is the stored data's to decide (a static
 * credential's fields of up to 4,096 characters each, an OAuth provider's tokens, a custom provider's
 * definition): without the second bound, 10,000 large reads could hold gigabytes.
 */
const PROXY_READS_KEPT: KeptBounds<MemberCredentialForProxy> = {
  values: 10_000,
  bytes: 32 * 1024 * 1024,
  bytesOf: proxyReadBytes,
  worthKeeping: (read) => read.credential !== undefined,
};

/** What GET /v1/end-users/{id} reads: the auth version, and the member (if any, with its profile) with its credentials. */
export interface MemberWithCredentials {
  authVersion: string;
  member: ({ id: string; created_at: string; updated_at: string } & StoredProfile) | undefined;
  credentials: CredentialRow[];
}

export class AudienceRepository extends Repository {
  readonly #memberWithCredentials;
  readonly #memberCredentialForProxy;
  readonly #proxyReads: ReadsUntilChange<MemberCredentialForProxy>;
  readonly #proxyStatementsTogether: StatementsTogether<ProxyReadArgs, MemberCredentialForProxy> | undefined;

  constructor(connections: Connections) {
    super(connections);
    const { root, reader } = connections;
    // From the auth version's one row, so the statement answers even where the member does not exist.
    // No bare `column = ?` here: SQLite (built with STAT4) compares such a term against the partial
    // indexes' `type = '…'` and, having looked at the bound value, re-prepares the statement each time
    // its parameters are bound, that is on every call (44 µs against 11 µs, bench/RESULTS.md). So the
    // arguments are compared through a cast, and the version's row id is written in the text.
    const versionAndMember = (serverId: string, externalUserId: string) =>
      root
        .selectFrom('auth_version as v')
        .leftJoin('audience_members as m', (join) => join.on('m.server_id', '=', asText(serverId)).on('m.external_user_id', '=', asText(externalUserId)))
        .select(['v.version as auth_version', 'm.id as m_id', 'm.created_at as m_created_at', 'm.updated_at as m_updated_at'])
        .where('v.id', '=', sql.lit(1));
    this.#memberWithCredentials = preparedQuery(reader, 2, (serverId: string, externalUserId: string) =>
      versionAndMember(serverId, externalUserId)
        .select(['m.display_name as m_display_name', 'm.email as m_email', 'm.tags as m_tags'])
        .leftJoin('credentials as c', 'c.member_id', 'm.id')
        .select(CREDENTIAL_COLUMNS.map((column) => `c.${column}` as const))
        .orderBy('c.provider'),
    );
    // The same, for one provider, with the server's definition of it where it is a custom one: a
    // proxied call's one statement (one round trip on PostgreSQL, where two cost ~100 µs of CPU a call).
    this.#memberCredentialForProxy = preparedQuery(reader, 3, (serverId: string, externalUserId: string, provider: string) =>
      versionAndMember(serverId, externalUserId)
        .leftJoin('credentials as c', (join) => join.onRef('c.member_id', '=', 'm.id').on('c.provider', '=', asText(provider)))
        .leftJoin('custom_providers as p', (join) => join.onRef('p.server_id', '=', 'm.server_id').onRef('p.slug', '=', 'c.provider'))
        .select('p.definition as custom_definition')
        .select(CREDENTIAL_COLUMNS.map((column) => `c.${column}` as const)),
    );
    this.#proxyReads = new ReadsUntilChange(connections.changeMark, PROXY_READS_KEPT);
    if (connections.engine === 'postgres') this.#proxyStatementsTogether = proxyReadsTogether(connections, this.#memberCredentialForProxy);
  }

  /**
   * The read of a proxied call, in one statement on the per-request reader (as memberWithCredentials),
   * answered from memory, the same object, until a change is committed (reads-until-change.ts): a busy
   * end user's calls then cost no statement, and a revocation is still seen by the next call (on
   * PostgreSQL by every node's: change-feed.ts). On PostgreSQL the calls that read together share one
   * statement (statements-together.ts), sent after each asked.
   */
  memberCredentialForProxy(serverId: string, externalUserId: string, provider: string): Promise<Readonly<MemberCredentialForProxy>> {
    // Neither the server id (made by Keyward) nor the external id (its schema) holds a control
    // character, so the first and last NULs end the server id and the provider however the caller
    // spelled it: no two calls' keys are the same text.
    const key = `${serverId}\0${provider}\0${externalUserId}`;
    const together = this.#proxyStatementsTogether;
    if (together) return this.#proxyReads.get(key, () => together.get(key, [serverId, externalUserId, provider]));
    return this.#proxyReads.get(key, async () => proxyReadOf((await this.#memberCredentialForProxy(serverId, externalUserId, provider))[0]!));
  }

  /**
   * The read of GET /v1/end-users/{id}, in one statement on the per-request reader (see
   * Connections.reader): the member (undefined where the server has none of that id), every credential
   * of it, and the auth version, so that the guard's judgement of the keys is confirmed by the same
   * read (api/get-end-user.ts) instead of a statement of its own.
   */
  async memberWithCredentials(serverId: string, externalUserId: string): Promise<MemberWithCredentials> {
    const rows = await this.#memberWithCredentials(serverId, externalUserId);
    const first = rows[0]!;
    const authVersion = String(first.auth_version);
    if (first.m_id === null) return { authVersion, member: undefined, credentials: [] };
    // A member without credentials is one row of nulls on the credentials' side. Otherwise each row is
    // a credential row as it stands (the member's columns beside it are never sent: the response schema
    // lists what leaves).
    const credentials = first.id === null ? [] : (rows as CredentialRow[]);
    const profile = { display_name: first.m_display_name, email: first.m_email, tags: first.m_tags };
    return { authVersion, member: { ...memberOf(first)!, ...profile }, credentials };
  }

  /** The member's row id, made on first use. Concurrent first uses meet at the unique (server, external id). */
  async ensureMember(serverId: string, externalUserId: string, now: string): Promise<string> {
    await this.db
      .insertInto('audience_members')
      .values({ id: newId('mem'), server_id: serverId, external_user_id: externalUserId, created_at: now, updated_at: now })
      .onConflict((oc) => oc.columns(['server_id', 'external_user_id']).doUpdateSet({ updated_at: now }))
      .execute();
    const member = await this.memberId(serverId, externalUserId);
    if (member === undefined) throw new Error('the member row just written is missing');
    return member;
  }

  /**
   * The member's id. With `lock`, its row is locked until the transaction ends on PostgreSQL (FOR
   * UPDATE): a revoke holds it while it reads and erases the member's credentials, so a form or
   * callback storing a credential for the same member (which locks the row through ensureMember's
   * upsert) runs wholly before or wholly after it.
   */
  async memberId(serverId: string, externalUserId: string, options: { lock?: boolean } = {}): Promise<string | undefined> {
    const query = this.db.selectFrom('audience_members').select('id').where('server_id', '=', serverId).where('external_user_id', '=', externalUserId);
    const row = await (options.lock ? this.lockedOnPostgres(query, (q) => q.forUpdate()) : query).executeTakeFirst();
    return row?.id;
  }

  /** Takes the member out of the audience (its credentials are deleted first: CredentialsRepository.deleteCredentials). */
  async removeMember(memberId: string): Promise<void> {
    await this.db.deleteFrom('audience_members').where('id', '=', memberId).execute();
    await this.connections.seenEverywhere();
  }

  /**
   * A member's profile, its row locked until the transaction ends on PostgreSQL (FOR UPDATE), so that
   * two changes to its tags merge one after the other (end-user-profile.ts); undefined where the server
   * has no such member.
   */
  async lockedProfile(serverId: string, externalUserId: string): Promise<({ id: string; created_at: string; updated_at: string } & StoredProfile) | undefined> {
    const query = this.db
      .selectFrom('audience_members')
      .select(['id', 'created_at', 'updated_at', 'display_name', 'email', 'tags'])
      .where('server_id', '=', serverId)
      .where('external_user_id', '=', externalUserId);
    return this.lockedOnPostgres(query, (q) => q.forUpdate()).executeTakeFirst();
  }

  /**
   * Writes a member's profile: its columns, and (where `tags` is given: the member's whole new set)
   * its rows of audience_member_tags, which carry the copies of the member's created_at and external
   * id that the tag filter walks in list order, read from the member row in the same statement.
   */
  async writeProfile(memberId: string, profile: StoredProfile, tags: readonly TagMatch[] | undefined, now: string): Promise<void> {
    await this.db
      .updateTable('audience_members')
      .set({ ...profile, updated_at: now })
      .where('id', '=', memberId)
      .execute();
    if (tags === undefined) return;
    await this.db.deleteFrom('audience_member_tags').where('member_id', '=', memberId).execute();
    if (tags.length === 0) return;
    await this.db
      .insertInto('audience_member_tags')
      .values((eb) => {
        const member = eb.selectFrom('audience_members').where('id', '=', memberId);
        return tags.map((tag) => ({
          member_id: memberId,
          server_id: member.select('server_id'),
          tag_key: tag.key,
          tag_value: tag.value,
          member_created_at: member.select('created_at'),
          external_user_id: member.select('external_user_id'),
        }));
      })
      .execute();
  }

  /** A member's profile by its external id, as events describe the member (undefined where the server has no such member). */
  async profileOf(serverId: string, externalUserId: string): Promise<StoredProfile | undefined> {
    return this.db
      .selectFrom('audience_members')
      .select(['display_name', 'email', 'tags'])
      .where('server_id', '=', serverId)
      .where('external_user_id', '=', externalUserId)
      .executeTakeFirst();
  }

  /** Which plan finds a page (see PagePlan): one count of the prefix's range, stopped past the limit. */
  async pagePlan(serverId: string, filter: PageFilter): Promise<PagePlan> {
    if (!filter.prefix) return 'walk';
    const { matches } = await this.prefixMatchesQuery(serverId, filter.prefix).executeTakeFirstOrThrow();
    return Number(matches) <= PREFIX_RANGE_LIMIT ? 'prefix-range' : 'walk';
  }

  prefixMatchesQuery(serverId: string, prefix: string) {
    return prefixMatchesQuery(this.db, serverId, prefix);
  }

  /**
   * Up to `rows` members after `after`, in the list's order. A prefix with more matches than
   * PREFIX_RANGE_LIMIT is looked for by a walk; when the walk gives up (the matches lie elsewhere in
   * time, as with ids given out in creation order), its range is read and sorted all the same, a cost
   * that grows with its matches rather than with the audience (bench/RESULTS.md).
   */
  async pageOf(serverId: string, filter: PageFilter, after: PagePosition | null, rows: number) {
    const plan = await this.pagePlan(serverId, filter);
    const index = plan === 'walk' ? await this.walkIndex(serverId, filter) : firstWalkIndex(filter);
    const page = await this.pageQuery(plan, serverId, filter, after, rows, index).execute();
    if (plan === 'prefix-range' || !filter.prefix || page.length === rows) return page;
    const [further] = await walkGoesOnQuery(this.db, serverId, index, after).execute();
    return further ? this.pageQuery('prefix-range', serverId, filter, after, rows).execute() : page;
  }

  /**
   * The index a walk reads (see WalkIndex): with several candidates (two tags, or a tag and a
   * provider), the one with the fewest entries, each counted up to one past WALK_COUNT_LIMIT (the
   * first of those with as many); otherwise the filter's only tag or provider, or the audience's page
   * index, with nothing counted.
   */
  async walkIndex(serverId: string, filter: PageFilter): Promise<WalkIndex> {
    const candidates = walkCandidates(filter);
    if (candidates.length < 2) return firstWalkIndex(filter);
    let fewest = { index: candidates[0]!, entries: WALK_COUNT_LIMIT + 1 };
    for (const index of candidates) {
      // Counted only as far as the fewest so far: a candidate that reaches it is not fewer.
      const { entries } = await walkEntriesQuery(this.db, serverId, index, fewest.entries).executeTakeFirstOrThrow();
      if (Number(entries) < fewest.entries) fewest = { index, entries: Number(entries) };
      if (fewest.entries === 0) break;
    }
    return fewest.index;
  }

  /** The count of a candidate's entries (public so that tests can look at the database's plan for it). */
  walkEntriesQuery(serverId: string, index: WalkIndex) {
    return walkEntriesQuery(this.db, serverId, index);
  }

  /**
   * The statement of one page under a plan, walking `index` (by default the filter's first tag, else
   * its provider), public so that tests can look at the database's plan for it.
   */
  pageQuery(plan: PagePlan, serverId: string, filter: PageFilter, after: PagePosition | null, rows: number, index: WalkIndex = firstWalkIndex(filter)) {
    const { prefix } = filter;
    if (plan === 'prefix-range' && prefix) return prefixRangePageQuery(this.db, serverId, { ...filter, prefix }, after, rows);
    return walkPageQuery(this.db, serverId, filter, after, rows, index);
  }
}
