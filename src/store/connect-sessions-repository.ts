/**
 * Connect sessions (CONTRACT 10): the Connect page's link (a digest of its token), the first
 * connection made through it, and the flows its page started, as the page shows their outcome (and
 * its status answer, the newest one started in connect.js's popup).
 */
import type { Insertable, Selectable } from 'kysely';
import { Repository } from './repository.js';
import type { ConnectSessionsTable, OAuthFlowsTable } from './schema.js';

/** A session as its page needs it, with the account of its server. */
export type ConnectSessionRow = Selectable<ConnectSessionsTable> & { account_id: string };

/** A flow the page started, as the page tells its outcome. */
export type SessionFlowRow = Pick<Selectable<OAuthFlowsTable>, 'id' | 'provider' | 'status' | 'error_code' | 'credential_id' | 'connect_popup'>;

/** The newest flow a session's page started in connect.js's popup, as its status answer tells it. */
export type PopupFlowRow = Pick<Selectable<OAuthFlowsTable>, 'provider' | 'status' | 'error_code' | 'credential_id' | 'expires_at' | 'id'>;

export class ConnectSessionsRepository extends Repository {
  async add(row: Insertable<ConnectSessionsTable>): Promise<void> {
    await this.db.insertInto('connect_sessions').values(row).execute();
  }

  async byToken(tokenDigest: string): Promise<ConnectSessionRow | undefined> {
    return this.db
      .selectFrom('connect_sessions as c')
      .innerJoin('servers as s', 's.id', 'c.server_id')
      .selectAll('c')
      .select('s.account_id')
      .where('c.token_digest', '=', tokenDigest)
      .executeTakeFirst();
  }

  /** The token digest of a session: what the OAuth callback checks the way back to its page against. */
  async tokenDigest(id: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('connect_sessions').select('token_digest').where('id', '=', id).executeTakeFirst();
    return row?.token_digest;
  }

  /** The member a session is for, with the display name the page greets them by; undefined before they exist. */
  async memberOf(serverId: string, externalUserId: string): Promise<{ id: string; display_name: string | null } | undefined> {
    return this.db
      .selectFrom('audience_members')
      .select(['id', 'display_name'])
      .where('server_id', '=', serverId)
      .where('external_user_id', '=', externalUserId)
      .executeTakeFirst();
  }

  /**
   * Ends the member's open sessions at `at`, already noticed (DELETE /v1/end-users without a provider:
   * the member left the audience on purpose, and a link to their page must not bring them back).
   */
  async endOpenOf(serverId: string, externalUserId: string, at: string): Promise<void> {
    await this.db
      .updateTable('connect_sessions')
      .set({ expires_at: at, expiry_notified_at: at })
      .where('server_id', '=', serverId)
      .where('external_user_id', '=', externalUserId)
      .where('expires_at', '>', at)
      .execute();
  }

  /** Records the session's first connection; a later one leaves the time as it was. */
  async markConnected(id: string, at: string): Promise<void> {
    await this.db.updateTable('connect_sessions').set({ connected_at: at }).where('id', '=', id).where('connected_at', 'is', null).execute();
  }

  /** One flow of the session's page; undefined for a flow of another session (or none). */
  async flowOfSession(flowId: string, sessionId: string): Promise<SessionFlowRow | undefined> {
    return this.db
      .selectFrom('oauth_flows')
      .select(['id', 'provider', 'status', 'error_code', 'credential_id', 'connect_popup'])
      .where('id', '=', flowId)
      .where('connect_session_id', '=', sessionId)
      .executeTakeFirst();
  }

  /** One range of oauth_flows_connect_session (migration 023) read backwards from the session's newest flow. */
  newestPopupFlowQuery(sessionId: string) {
    return this.db
      .selectFrom('oauth_flows')
      .select(['id', 'provider', 'status', 'error_code', 'credential_id', 'expires_at'])
      .where('connect_session_id', '=', sessionId)
      .where('connect_popup', '=', 1)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(1);
  }

  /** The newest flow the session's page started in connect.js's popup; undefined where it started none. */
  newestPopupFlow(sessionId: string): Promise<PopupFlowRow | undefined> {
    return this.newestPopupFlowQuery(sessionId).executeTakeFirst();
  }
}
