import type { ColumnDataType, Kysely } from 'kysely';
import type { Engine } from '../connections.js';

/**
 * Webhooks (CONTRACT 7): a server's endpoints, their signing secrets (sealed; several live during a
 * rotation's grace period), the outbox of messages, one per event and endpoint, written in the
 * transaction of the change it reports, and every delivery attempt.
 *
 * A message is due when it is pending, its next attempt time has come and no node holds a live lease
 * on it; webhook_messages_endpoint_due serves that question, endpoint by endpoint. Removing an endpoint removes its secrets,
 * messages and attempts with it.
 */
export function webhooksMigration(engine: Engine) {
  const bytes: ColumnDataType = engine === 'postgres' ? 'bytea' : 'blob';
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('webhook_endpoints')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('server_id', 'text', (c) => c.notNull().references('servers.id').onDelete('cascade'))
        .addColumn('url', 'text', (c) => c.notNull())
        // JSON array of event types, or null for every event.
        .addColumn('events', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('webhook_endpoints_server').on('webhook_endpoints').columns(['server_id', 'created_at']).execute();

      await db.schema
        .createTable('webhook_secrets')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('endpoint_id', 'text', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
        .addColumn('secret', bytes, (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        // Null while current; the end of its grace period once rotated out.
        .addColumn('expires_at', 'text')
        .execute();
      await db.schema.createIndex('webhook_secrets_endpoint').on('webhook_secrets').column('endpoint_id').execute();
      await db.schema.createIndex('webhook_secrets_expiry').on('webhook_secrets').column('expires_at').execute();

      await db.schema
        .createTable('webhook_messages')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('endpoint_id', 'text', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
        .addColumn('server_id', 'text', (c) => c.notNull())
        .addColumn('event_type', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        // When the retries' 24 hours began: the message's creation, or its last resend.
        .addColumn('schedule_start', 'text', (c) => c.notNull())
        .addColumn('failures', 'integer', (c) => c.notNull())
        .addColumn('next_attempt_at', 'text', (c) => c.notNull())
        .addColumn('lease_holder', 'text')
        .addColumn('lease_until', 'text')
        // When it was delivered or marked failed; null while pending.
        .addColumn('ended_at', 'text')
        .execute();
      // What is due at one endpoint (the dispatcher's claims and its walk of the endpoints).
      await db.schema.createIndex('webhook_messages_endpoint_due').on('webhook_messages').columns(['endpoint_id', 'status', 'next_attempt_at']).execute();
      await db.schema.createIndex('webhook_messages_endpoint').on('webhook_messages').columns(['endpoint_id', 'created_at']).execute();
      await db.schema.createIndex('webhook_messages_ended').on('webhook_messages').column('ended_at').execute();

      await db.schema
        .createTable('webhook_attempts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('message_id', 'text', (c) => c.notNull().references('webhook_messages.id').onDelete('cascade'))
        .addColumn('attempted_at', 'text', (c) => c.notNull())
        .addColumn('status_code', 'integer')
        .addColumn('error', 'text')
        .addColumn('duration_ms', 'integer', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('webhook_attempts_message').on('webhook_attempts').columns(['message_id', 'attempted_at']).execute();
      await db.schema.createIndex('webhook_attempts_time').on('webhook_attempts').column('attempted_at').execute();
    },
  };
}
