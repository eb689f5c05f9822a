/**
 * Every column that holds a sealed value (every `vault.seal`/`sealJson` call site writes one of
 * these), with its row's key and the associated data it was sealed with. The master-key check and
 * rotation walk this list, so a new sealed column (webhook secrets) is one more entry here.
 */
import type { Database } from '../store/schema.js';
import { credentialAad } from './credentials.js';
import { aad as idempotencyAad } from './idempotency.js';
import { verifierAad } from './oauth-flows.js';
import { clientSecretAad } from './providers.js';

export interface SealedColumn {
  table: keyof Database;
  column: string;
  /** The primary key's columns, in order: batches walk the table by them. */
  key: string[];
  /** Every column `aad` reads (the key's, and any other). */
  reads: string[];
  aad(row: Record<string, unknown>): string;
}

const text = (row: Record<string, unknown>, column: string) => String(row[column]);

export const SEALED_COLUMNS: readonly SealedColumn[] = [
  {
    table: 'credentials',
    column: 'secret',
    key: ['id'],
    reads: ['id', 'server_id', 'member_id'],
    aad: (r) => credentialAad(text(r, 'id'), text(r, 'server_id'), text(r, 'member_id')),
  },
  {
    table: 'server_providers',
    column: 'client_secret',
    key: ['server_id', 'provider'],
    reads: ['server_id', 'provider'],
    aad: (r) => clientSecretAad(text(r, 'server_id'), text(r, 'provider')),
  },
  {
    table: 'oauth_flows',
    column: 'verifier',
    key: ['id'],
    reads: ['id', 'server_id'],
    aad: (r) => verifierAad(text(r, 'id'), text(r, 'server_id')),
  },
  {
    table: 'idempotency_records',
    column: 'response',
    key: ['server_id', 'idempotency_key'],
    reads: ['server_id', 'idempotency_key'],
    aad: (r) => idempotencyAad(text(r, 'server_id'), text(r, 'idempotency_key')),
  },
];
