/**
 * Webhooks (CONTRACT 7): endpoints and their secrets, the outbox's messages as events write them, and
 * deliveries as the dashboard and the CLI show them. The delivery protocol itself (due, claim,
 * settle) is webhook-delivery-repository.ts.
 */
import type { Insertable } from 'kysely';
import { Repository } from './repository.js';
import type { WebhookEndpointsTable, WebhookMessageStatus, WebhookMessagesTable, WebhookSecretsTable } from './schema.js';

export type NewWebhookMessage = Insertable<WebhookMessagesTable>;

export class WebhooksRepository extends Repository {
  // ---- Endpoints and secrets ----

  async addEndpoint(endpoint: Insertable<WebhookEndpointsTable>): Promise<void> {
    await this.db.insertInto('webhook_endpoints').values(endpoint).execute();
  }

  /** A server's endpoints, oldest first. */
  endpointsOf(serverId: string) {
    return this.db.selectFrom('webhook_endpoints').selectAll().where('server_id', '=', serverId).orderBy('created_at').orderBy('id').execute();
  }

  /** An endpoint with the account its server belongs to (what the dashboard and the CLI check access by). */
  endpoint(id: string) {
    return this.db
      .selectFrom('webhook_endpoints as e')
      .innerJoin('servers as s', 's.id', 'e.server_id')
      .select(['e.id', 'e.server_id', 'e.url', 'e.events', 'e.created_at', 's.account_id'])
      .where('e.id', '=', id)
      .executeTakeFirst();
  }

  /** Deletes the endpoint, its secrets, messages and attempts (foreign keys cascade); false where there was none. */
  async removeEndpoint(id: string): Promise<boolean> {
    const removed = await this.db.deleteFrom('webhook_endpoints').where('id', '=', id).executeTakeFirst();
    return removed.numDeletedRows > 0n;
  }

  async addSecret(secret: Insertable<WebhookSecretsTable>): Promise<void> {
    await this.db.insertInto('webhook_secrets').values(secret).execute();
  }

  /** Gives the endpoint's current secret an end (its grace period); secrets already ending keep their earlier end. */
  async endCurrentSecrets(endpointId: string, at: string): Promise<void> {
    await this.db.updateTable('webhook_secrets').set({ expires_at: at }).where('endpoint_id', '=', endpointId).where('expires_at', 'is', null).execute();
  }

  /** The secrets that sign at `now`: the current one and those still in their grace period, newest first. */
  liveSecrets(endpointId: string, now: string) {
    return this.db
      .selectFrom('webhook_secrets')
      .select(['id', 'endpoint_id', 'secret'])
      .where('endpoint_id', '=', endpointId)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
  }

  // ---- The outbox ----

  /**
   * The server's endpoints an event is written for. On PostgreSQL their rows are held (FOR KEY SHARE)
   * until the transaction ends: an endpoint removed at the same moment waits for it, rather than
   * making the message's foreign key, and so the whole change (a form, a callback), fail.
   */
  subscribersOf(serverId: string) {
    const query = this.db.selectFrom('webhook_endpoints').select(['id', 'events']).where('server_id', '=', serverId);
    return this.lockedOnPostgres(query, (q) => q.forKeyShare()).execute();
  }

  async addMessages(messages: NewWebhookMessage[]): Promise<void> {
    if (messages.length > 0) await this.db.insertInto('webhook_messages').values(messages).execute();
  }

  /**
   * Gives held messages (their event waited on an answer, such as a provider's to a revocation) their
   * final body and makes them due now. A message already attempted keeps what it was sent with.
   */
  async release(ids: readonly string[], payload: string, now: string): Promise<void> {
    if (ids.length === 0) return;
    await this.db
      .updateTable('webhook_messages')
      .set({ payload, next_attempt_at: now })
      .where('id', 'in', ids)
      .where('status', '=', 'pending')
      .where('failures', '=', 0)
      .where('lease_holder', 'is', null)
      .execute();
  }

  // ---- Deliveries, as the dashboard and the CLI show them ----

  /** An endpoint's messages, newest first (of one status, where given). */
  messagesOf(endpointId: string, status: WebhookMessageStatus | undefined, limit: number) {
    let query = this.db
      .selectFrom('webhook_messages')
      .select(['id', 'event_type', 'status', 'created_at', 'next_attempt_at', 'ended_at'])
      .where('endpoint_id', '=', endpointId);
    if (status) query = query.where('status', '=', status);
    return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  }

  /** The attempts of these messages, oldest first. */
  attemptsOf(messageIds: readonly string[]) {
    if (messageIds.length === 0) return Promise.resolve([]);
    return this.db.selectFrom('webhook_attempts').selectAll().where('message_id', 'in', messageIds).orderBy('attempted_at').orderBy('id').execute();
  }

  /** A message with its endpoint's server and account. */
  message(id: string) {
    return this.db
      .selectFrom('webhook_messages as m')
      .innerJoin('servers as s', 's.id', 'm.server_id')
      .select(['m.id', 'm.endpoint_id', 'm.server_id', 'm.status', 's.account_id'])
      .where('m.id', '=', id)
      .executeTakeFirst();
  }

  /** failed → pending, due now, with a new 24 hours of retries; false where the message was not failed. */
  async resend(id: string, now: string): Promise<boolean> {
    const resent = await this.db
      .updateTable('webhook_messages')
      .set({ status: 'pending', failures: 0, schedule_start: now, next_attempt_at: now, ended_at: null })
      .where('id', '=', id)
      .where('status', '=', 'failed')
      .executeTakeFirst();
    return resent.numUpdatedRows > 0n;
  }
}
