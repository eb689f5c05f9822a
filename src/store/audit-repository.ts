/** The audit trail (audit_events). */
import type { Insertable } from 'kysely';
import { newId } from '../primitives/ids.js';
import { Repository } from './repository.js';
import type { AuditEventsTable } from './schema.js';

/** Where an account's audit page starts: after (older than) this event. */
export interface AuditPosition {
  at: string;
  id: string;
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
  pageOfAccount(accountId: string, before: AuditPosition | null, limit: number) {
    let query = this.db
      .selectFrom('audit_events as e')
      .leftJoin('servers as s', (join) => join.onRef('s.id', '=', 'e.server_id').on('s.account_id', '=', accountId))
      .select(['e.id', 'e.action', 'e.actor', 'e.detail', 'e.created_at', 'e.server_id', 's.name as server_name'])
      .where('e.account_id', '=', accountId);
    if (before) {
      query = query.where((eb) => eb.or([eb('e.created_at', '<', before.at), eb.and([eb('e.created_at', '=', before.at), eb('e.id', '<', before.id)])]));
    }
    return query.orderBy('e.created_at', 'desc').orderBy('e.id', 'desc').limit(limit).execute();
  }
}
