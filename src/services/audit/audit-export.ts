/**
 * `keyward audit export` (CONTRACT 4 and 9): an account's trail, oldest first, one event at a time in
 * the contract's shape. Read a page at a time by position (audit-repository.ts exportPage), so the
 * memory it takes is one page's whatever the trail's length, and an event written while the export
 * runs is either in it or after it, never in it twice.
 */
import { CLI_ACTOR, type ServiceContext } from '../context.js';
import { DomainError } from '../domain-error.js';

/** Events read per statement: large enough that a million events take 2,000 reads, small enough to stay flat. */
const EXPORT_PAGE = 500;

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

export async function* exportAudit(ctx: ServiceContext, accountId: string, range: { since?: string; until?: string }): AsyncGenerator<ExportedAuditEvent> {
  if (!(await ctx.store.accounts.exists(accountId))) throw new DomainError('account_not_found', { detail: `no account ${accountId}` });
  let after: { at: string; id: string } | null = null;
  for (;;) {
    const rows = await ctx.store.audit.exportPage(accountId, range, after, EXPORT_PAGE);
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
    if (rows.length < EXPORT_PAGE) return;
    const last = rows.at(-1)!;
    after = { at: last.created_at, id: last.id };
  }
}
