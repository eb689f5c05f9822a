/**
 * `keyward audit export` (CONTRACT 4 and 9): an account's trail, oldest first, one event at a time in
 * the contract's shape. One statement read row by row (audit-repository.ts exportRows): the memory it
 * takes does not grow with the trail, and an event written while the export runs is in it or after it,
 * never in it twice.
 */

import type { ExportedRow } from '../../store/audit-repository.js';
import { CLI_ACTOR, type ServiceContext } from '../context.js';
import { DomainError } from '../domain-error.js';

export interface ExportedAuditEvent {
  id: string;
  at: string;
  action: string;
  /** `user:usr_…` for a person, `operator` for the CLI, else as stored (`api:key_…`, `end_user:…`, `browser`, `system`). */
  actor: string;
  target: string;
  /** The event's detail, and the server it concerns where it concerns one. Never a secret (audit.ts). */
  details: Record<string, unknown>;
}

/** The trail in chunks of events (store/connections.ts ChunkReader), each made as it is read. */
export async function* exportAudit(
  ctx: ServiceContext,
  accountId: string,
  range: { since?: string; until?: string },
): AsyncGenerator<Iterable<ExportedAuditEvent>> {
  if (!(await ctx.store.accounts.exists(accountId))) throw new DomainError('account_not_found', { detail: `no account ${accountId}` });
  for await (const rows of ctx.store.audit.exportRows(accountId, range)) yield shaped(rows);
}

function* shaped(rows: Iterable<ExportedRow>): Generator<ExportedAuditEvent> {
  for (const row of rows) {
    const details = JSON.parse(row.detail) as Record<string, unknown>;
    yield {
      id: row.id,
      at: row.created_at,
      action: row.action,
      actor: row.actor === CLI_ACTOR ? 'operator' : row.actor,
      target: row.target_id,
      details: row.server_id === null ? details : { ...details, serverId: row.server_id },
    };
  }
}
