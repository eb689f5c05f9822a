import { type Kysely, sql } from 'kysely';

/**
 * The newest flow a connect session's page started in connect.js's popup (CONTRACT 10): what the
 * page's status answer (GET /connect/s/{token}/status) reads, about once a second for each company
 * page waiting on a popup the browser severed from it (a provider's page sent
 * Cross-Origin-Opener-Policy). One short range read backwards from the session's newest flow, on any
 * table size. Partial on connect_session_id: the flows started with POST /v1/oauth/{provider}/start
 * (all null there) stay out of it, and `connect_session_id = ?` implies the condition on both engines.
 */
export function connectPopupFlowsMigration() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await sql`create index oauth_flows_connect_session on oauth_flows (connect_session_id, created_at, id)
        where connect_session_id is not null`.execute(db);
    },
  };
}
