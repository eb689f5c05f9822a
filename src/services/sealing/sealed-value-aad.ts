/**
 * The associated data each sealed column's values were sealed with (the columns themselves are
 * listed in store/sealed-columns.ts): what the master-key check and rotation need to open a value
 * read by table, and seal it again.
 */
import type { SealedColumn, SealedRow, SealedTable } from '../../store/sealed-columns.js';
import { credentialAad } from '../credentials/credentials.js';
import { aad as idempotencyAad } from '../idempotency/idempotency.js';
import { totpSecretAad } from '../mfa/totp-secret.js';
import { verifierAad } from '../oauth/oauth-flows.js';
import { clientSecretAad } from '../providers/server-providers.js';
import { webhookSecretAad } from '../webhooks/webhook-signing.js';
import { instanceSecretAad } from './instance-secrets.js';
import { ssoClientSecretAad } from './sso-client-secret.js';

const text = (row: SealedRow, column: string) => String(row[column]);

const AAD_BY_TABLE: Record<SealedTable, (row: SealedRow) => string> = {
  credentials: (r) => credentialAad(text(r, 'id'), text(r, 'server_id'), text(r, 'member_id')),
  server_providers: (r) => clientSecretAad(text(r, 'server_id'), text(r, 'provider')),
  oauth_flows: (r) => verifierAad(text(r, 'id'), text(r, 'server_id')),
  idempotency_records: (r) => idempotencyAad(text(r, 'server_id'), text(r, 'idempotency_key')),
  webhook_secrets: (r) => webhookSecretAad(text(r, 'id'), text(r, 'endpoint_id')),
  instance_secrets: (r) => instanceSecretAad(text(r, 'name')),
  account_sso: (r) => ssoClientSecretAad(text(r, 'account_id')),
  user_totp: (r) => totpSecretAad(text(r, 'user_id')),
};

/** The associated data of the value `row` holds in `column` (a row read with the column's `reads`). */
export function sealedValueAad(column: SealedColumn, row: SealedRow): string {
  return AAD_BY_TABLE[column.table](row);
}
