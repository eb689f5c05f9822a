/**
 * Every column that holds a sealed value (every `vault.seal`/`sealJson` call site writes one of
 * these), with its row's key and the columns its associated data is made of. The master-key check
 * and rotation walk this list, so a new sealed column is one more entry here, and one more
 * associated-data rule in services/sealing/sealed-value-aad.ts (the type makes that one required), and a
 * migration giving it the trigger that refuses a retired master key (migrations/013).
 * Each table holds one sealed column, so a column's table names it.
 */
import type { Database } from './schema.js';

interface SealedColumnDescription {
  table: keyof Database;
  column: string;
  /** The primary key's columns, in order: batches walk the table by them. */
  key: readonly string[];
  /** Every column the associated data reads (the key's, and any other). */
  reads: readonly string[];
}

/** A row of a sealed column as read for resealing: its `reads` columns and the sealed bytes. */
export type SealedRow = Record<string, unknown>;

export const SEALED_COLUMNS = [
  { table: 'credentials', column: 'secret', key: ['id'], reads: ['id', 'server_id', 'member_id'] },
  { table: 'server_providers', column: 'client_secret', key: ['server_id', 'provider'], reads: ['server_id', 'provider'] },
  { table: 'oauth_flows', column: 'verifier', key: ['id'], reads: ['id', 'server_id'] },
  { table: 'idempotency_records', column: 'response', key: ['server_id', 'idempotency_key'], reads: ['server_id', 'idempotency_key'] },
  { table: 'webhook_secrets', column: 'secret', key: ['id'], reads: ['id', 'endpoint_id'] },
  { table: 'instance_secrets', column: 'secret', key: ['name'], reads: ['name'] },
  { table: 'account_sso', column: 'client_secret', key: ['account_id'], reads: ['account_id'] },
  { table: 'user_totp', column: 'secret', key: ['user_id'], reads: ['user_id'] },
] as const satisfies readonly SealedColumnDescription[];

export type SealedColumn = (typeof SEALED_COLUMNS)[number];
/** The tables that hold a sealed column. */
export type SealedTable = SealedColumn['table'];
