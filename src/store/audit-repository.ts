/** The audit trail (audit_events). */
import type { Insertable } from 'kysely';
import { newId } from '../primitives/ids.js';
import { Repository } from './repository.js';
import type { AuditEventsTable } from './schema.js';

/** Where a page of an account's trail starts: after this event (older on the Audit page, newer in an export). */
export interface AuditPosition {
  at: string;
  id: string;
}

/** What the Audit page narrows the trail to; each part optional. Times are ISO 8601 UTC. */
export interface AuditFilter {
  /** An actor string as stored (`user:usr_…`, `cli`, …). */
  actor?: string;
  action?: string;
  /** From this time on (inclusive)… */
  since?: string;
  /** …and before this one (exclusive). */
  until?: string;
}

export class AuditRepository extends Repository {
  /** Runs on the caller's transaction, so the trail is written with the change it describes, or not at all. */
  async record(event: Omit<Insertable<AuditEventsTable>, 'id'>): Promise<void> {
    await this.db
      .insertInto('audit_events')
      .values({ id: newId('evt'), ...event })
      .execute();
  }

  /**
   * An account's events, newest first, `limit` of them from `before` on, each with the name of its
   * server. The server is joined through the account too: a server id in an event names only this
   * account's server.
   */
  pageOfAccount(accountId: string, filter: AuditFilter, before: AuditPosition | null, limit: number) {
    return this.pageOfAccountQuery(accountId, filter, before, limit).execute();
  }

  /** The statement of pageOfAccount, unrun: what a test reads the plan of. */
  pageOfAccountQuery(accountId: string, filter: AuditFilter, before: AuditPosition | null, limit: number) {
    // From a position, `until` is already met (the position came from the range), and left out: two
    // upper bounds on the time would leave SQLite to pick one, and it picks the column's, not the position's.
    return this.#filtered(accountId, before === null ? filter : { ...filter, until: undefined })
      .leftJoin('servers as s', (join) => join.onRef('s.id', '=', 'e.server_id').on('s.account_id', '=', accountId))
      .select(['e.id', 'e.action', 'e.actor', 'e.detail', 'e.created_at', 'e.server_id', 's.name as server_name'])
      .$if(before !== null, (q) => q.where((eb) => eb(eb.refTuple('e.created_at', 'e.id'), '<', eb.tuple(before!.at, before!.id))))
      .orderBy('e.created_at', 'desc')
      .orderBy('e.id', 'desc')
      .limit(limit);
  }

  /**
   * An account's events oldest first, `limit` of them after `after`: what `keyward audit export`
   * streams, a page at a time, so that its memory does not grow with the trail.
   */
  exportPage(accountId: string, filter: Pick<AuditFilter, 'since' | 'until'>, after: AuditPosition | null, limit: number) {
    return this.exportPageQuery(accountId, filter, after, limit).execute();
  }

  /** The statement of exportPage, unrun. */
  exportPageQuery(accountId: string, filter: Pick<AuditFilter, 'since' | 'until'>, after: AuditPosition | null, limit: number) {
    // As pageOfAccountQuery: from a position `since` is met, and kept it made every page read from `since` on (an export of
    // a million events from a day on took 333 s instead of 15).
    return this.#filtered(accountId, after === null ? filter : { ...filter, since: undefined })
      .select(['e.id', 'e.created_at', 'e.action', 'e.actor', 'e.target_id', 'e.server_id', 'e.detail'])
      .$if(after !== null, (q) => q.where((eb) => eb(eb.refTuple('e.created_at', 'e.id'), '>', eb.tuple(after!.at, after!.id))))
      .orderBy('e.created_at', 'asc')
      .orderBy('e.id', 'asc')
      .limit(limit);
  }

  /** The account's events narrowed by `filter`: each filter's columns lead an index of migration 017, the page's order ends it. */
  #filtered(accountId: string, filter: AuditFilter) {
    return this.db
      .selectFrom('audit_events as e')
      .where('e.account_id', '=', accountId)
      .$if(filter.actor !== undefined, (q) => q.where('e.actor', '=', filter.actor!))
      .$if(filter.action !== undefined, (q) => q.where('e.action', '=', filter.action!))
      .$if(filter.since !== undefined, (q) => q.where('e.created_at', '>=', filter.since!))
      .$if(filter.until !== undefined, (q) => q.where('e.created_at', '<', filter.until!));
  }
}
