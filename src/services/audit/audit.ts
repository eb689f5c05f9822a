import type { Actor, ServiceContext } from '../context.js';

export type AuditAction =
  | 'account_key.created'
  | 'account_key.revoked'
  | 'account_key.browser_exposure'
  | 'server.created'
  | 'server.mode_changed'
  | 'server.secrets_readable_changed'
  | 'server_key.rotated'
  | 'server.redirect_uri_allowed'
  | 'server.redirect_uri_removed'
  | 'server.branding_changed'
  | 'provider.enabled'
  | 'provider.added'
  | 'credential.connected'
  | 'credential.replaced'
  | 'credential.revoked'
  | 'credential.checked'
  | 'end_user.removed'
  | 'end_user.profile_updated'
  | 'connect_session.created'
  | 'webhook.added'
  | 'webhook.removed'
  | 'webhook.secret_rotated'
  | 'webhook.message_resent'
  | 'user.password_set'
  | 'user.signed_in'
  | 'user.sign_in_failed'
  | 'session.ended'
  | 'sessions.ended_everywhere'
  | 'user.invited'
  | 'invitation.revoked'
  | 'user.joined'
  | 'user.role_changed'
  | 'user.removed'
  | 'mfa.enabled'
  | 'mfa.disabled'
  | 'mfa.recovery_code_used'
  | 'mfa.recovery_codes_regenerated'
  | 'account.mfa_required_changed'
  | 'sso.configured'
  | 'sso.removed'
  | 'account.sso_required_changed';

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

/**
 * Called inside the transaction of the change it describes (the ambient one), so the trail never
 * disagrees with the data. Only the actions above are written.
 */
export async function recordAudit(ctx: ServiceContext, event: AuditEvent): Promise<void> {
  await ctx.store.audit.record({
    account_id: event.accountId,
    server_id: event.serverId ?? null,
    actor: event.actor,
    action: event.action,
    target_id: event.targetId,
    detail: JSON.stringify(event.detail ?? {}),
    created_at: event.at,
  });
}
