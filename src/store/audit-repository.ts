/** The audit trail (audit_events). */
import type { Insertable } from 'kysely';
import { newId } from '../primitives/ids.js';
import { Repository } from './repository.js';
import type { AuditEventsTable } from './schema.js';

/** Where a page of the Audit page starts: after this event (older). */
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

/** A row of exportRows. */
export type ExportedRow = Pick<AuditEventsTable, 'id' | 'created_at' | 'action' | 'actor' | 'target_id' | 'server_id' | 'detail'>;

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
   * An account's events in `filter`, oldest first: what `keyward audit export` writes. One statement,
   * so one snapshot (an event written while the export runs is in it or not, never twice), read row by
   * row in chunks (Connections.readInChunks), so that the export's memory does not grow with the trail.
   */
  exportRows(accountId: string, filter: Pick<AuditFilter, 'since' | 'until'>): AsyncIterable<Iterable<ExportedRow>> {
    const { sql, parameters } = this.exportQuery(accountId, filter).compile();
    return this.connections.readInChunks(sql, parameters) as AsyncIterable<Iterable<ExportedRow>>;
  }

  /** The statement of exportRows, unrun: what a test reads the plan of. */
  exportQuery(accountId: string, filter: Pick<AuditFilter, 'since' | 'until'>) {
    return this.#filtered(accountId, filter)
      .select(['e.id', 'e.created_at', 'e.action', 'e.actor', 'e.target_id', 'e.server_id', 'e.detail'])
      .orderBy('e.created_at', 'asc')
      .orderBy('e.id', 'asc');
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
