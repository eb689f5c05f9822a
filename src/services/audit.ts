import { newId } from '../ids.js';
import type { Actor, Db } from './context.js';

export type AuditAction =
  | 'account_key.created'
  | 'account_key.revoked'
  | 'account_key.browser_exposure'
  | 'server.created'
  | 'server.mode_changed'
  | 'server_key.rotated'
  | 'provider.enabled'
  | 'provider.added'
  | 'credential.connected'
  | 'credential.replaced'
  | 'credential.revoked';

export interface AuditEvent {
  accountId: string;
  serverId?: string | null;
  actor: Actor;
  action: AuditAction;
  targetId: string;
  /** Never a secret: hints, labels, slugs, external user ids. */
  detail?: Record<string, unknown>;
  at: string;
}

/** Written in the same transaction as the change it describes, so the trail never disagrees with the data. */
export async function recordAudit(db: Db, event: AuditEvent): Promise<void> {
  await db
    .insertInto('audit_events')
    .values({
      id: newId('evt'),
      account_id: event.accountId,
      server_id: event.serverId ?? null,
      actor: event.actor,
      action: event.action,
      target_id: event.targetId,
      detail: JSON.stringify(event.detail ?? {}),
      created_at: event.at,
    })
    .execute();
}
