/** OAuth flows, hosted static-credential form sessions, and idempotency records of the POST routes. */
import type { Insertable, Selectable } from 'kysely';
import { Repository } from './repository.js';
import type { IdempotencyRecordsTable, OAuthFlowsTable, StaticFormSessionsTable } from './schema.js';

type FormSession = Selectable<StaticFormSessionsTable>;
type Flow = Selectable<OAuthFlowsTable>;

/** A form session as its page needs it, with the account of its server. */
export type OpenFormSessionRow = Pick<FormSession, 'id' | 'server_id' | 'external_user_id' | 'provider' | 'redirect_uri' | 'status' | 'expires_at'> & {
  account_id: string;
};

/** A flow as its callback needs it, with the account of its server. */
export type CallbackFlowRow = Pick<
  Flow,
  | 'id'
  | 'server_id'
  | 'external_user_id'
  | 'provider'
  | 'redirect_uri'
  | 'scopes'
  | 'status'
  | 'error_code'
  | 'expires_at'
  | 'verifier'
  | 'connect_session_id'
  | 'browser_binding'
  | 'connect_popup'
> & {
  account_id: string;
};

export class FlowsRepository extends Repository {
  async addFormSession(row: Insertable<StaticFormSessionsTable>): Promise<void> {
    await this.db.insertInto('static_form_sessions').values(row).execute();
  }

  async formSessionByToken(tokenDigest: string): Promise<OpenFormSessionRow | undefined> {
    return this.db
      .selectFrom('static_form_sessions as f')
      .innerJoin('servers as s', 's.id', 'f.server_id')
      .select(['f.id', 'f.server_id', 'f.external_user_id', 'f.provider', 'f.redirect_uri', 'f.status', 'f.expires_at', 's.account_id'])
      .where('f.token_digest', '=', tokenDigest)
      .executeTakeFirst();
  }

  /**
   * Marks a pending, unexpired form completed; false if it was not (any more). The guarded UPDATE is
   * what makes a form single-use: of two simultaneous submissions, only one finds it still pending.
   * A form whose expiry was already notified (`expired`, expiry-notices-repository.ts) is not pending
   * either, even for a submission that read the time just before its expiry: never both expired and connected.
   */
  async useFormSession(id: string, now: string): Promise<boolean> {
    const used = await this.db
      .updateTable('static_form_sessions')
      .set({ status: 'completed', completed_at: now })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return used.numUpdatedRows > 0n;
  }

  async linkFormSessionCredential(id: string, credentialId: string): Promise<void> {
    await this.db.updateTable('static_form_sessions').set({ credential_id: credentialId }).where('id', '=', id).execute();
  }

  async addFlow(row: Insertable<OAuthFlowsTable>): Promise<void> {
    await this.db.insertInto('oauth_flows').values(row).execute();
  }

  async flowByState(stateDigest: string): Promise<CallbackFlowRow | undefined> {
    return this.db
      .selectFrom('oauth_flows as f')
      .innerJoin('servers as s', 's.id', 'f.server_id')
      .select([
        'f.id',
        'f.server_id',
        'f.external_user_id',
        'f.provider',
        'f.redirect_uri',
        'f.scopes',
        'f.status',
        'f.error_code',
        'f.expires_at',
        'f.verifier',
        'f.connect_session_id',
        'f.browser_binding',
        'f.connect_popup',
        's.account_id',
      ])
      .where('f.state_digest', '=', stateDigest)
      .executeTakeFirst();
  }

  /** pending → exchanging while unexpired; false if another request claimed it first, or it expired. */
  async claimFlow(id: string, now: string): Promise<boolean> {
    const claimed = await this.db
      .updateTable('oauth_flows')
      .set({ status: 'exchanging' })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return claimed.numUpdatedRows > 0n;
  }

  /** Fails a flow still in `from` with `errorCode`; false where it had left `from` meanwhile. */
  async endFlow(id: string, from: 'pending' | 'exchanging', errorCode: string, at: string): Promise<boolean> {
    const ended = await this.db
      .updateTable('oauth_flows')
      .set({ status: 'failed', error_code: errorCode, completed_at: at })
      .where('id', '=', id)
      .where('status', '=', from)
      .executeTakeFirst();
    return ended.numUpdatedRows > 0n;
  }

  /** exchanging → completed; false where the flow left `exchanging` meanwhile. */
  async completeFlow(id: string, at: string): Promise<boolean> {
    const done = await this.db
      .updateTable('oauth_flows')
      .set({ status: 'completed', completed_at: at })
      .where('id', '=', id)
      .where('status', '=', 'exchanging')
      .executeTakeFirst();
    return done.numUpdatedRows > 0n;
  }

  async linkFlowCredential(id: string, credentialId: string): Promise<void> {
    await this.db.updateTable('oauth_flows').set({ credential_id: credentialId }).where('id', '=', id).execute();
  }

  /** The record of a key not yet expired at `now`. */
  async liveIdempotencyRecord(serverId: string, key: string, now: string): Promise<Selectable<IdempotencyRecordsTable> | undefined> {
    return this.db
      .selectFrom('idempotency_records')
      .selectAll()
      .where('server_id', '=', serverId)
      .where('idempotency_key', '=', key)
      .where('expires_at', '>', now)
      .executeTakeFirst();
  }

  /** Removes the key's record if it expired by `now`, so a new request may take the key. */
  async deleteExpiredIdempotencyRecord(serverId: string, key: string, now: string): Promise<void> {
    await this.db
      .deleteFrom('idempotency_records')
      .where('server_id', '=', serverId)
      .where('idempotency_key', '=', key)
      .where('expires_at', '<=', now)
      .execute();
  }

  /** Fails with a unique violation (store-errors.ts) where a live record holds the key. */
  async addIdempotencyRecord(row: Insertable<IdempotencyRecordsTable>): Promise<void> {
    await this.db.insertInto('idempotency_records').values(row).execute();
  }

  /**
   * Cancels the member's pending hosted forms and OAuth flows on a server (of one provider, or all),
   * as part of revoking the member: a flow whose code is being swapped right now is cancelled too,
   * so its tokens are revoked, not stored.
   */
  async cancelPendingConnections(serverId: string, externalUserId: string, provider: string | undefined, now: string): Promise<void> {
    for (const [table, open] of [
      ['static_form_sessions', ['pending']],
      ['oauth_flows', ['pending', 'exchanging']],
    ] as const) {
      let pending = this.db
        .updateTable(table)
        .set({ status: 'cancelled', completed_at: now })
        .where('server_id', '=', serverId)
        .where('external_user_id', '=', externalUserId)
        .where('status', 'in', open);
      if (provider) pending = pending.where('provider', '=', provider);
      await pending.execute();
    }
  }
}
