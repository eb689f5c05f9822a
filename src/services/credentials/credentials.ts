/**
 * Stored credentials: at most one live credential per member and provider, its secrets sealed with the
 * credential's, server's and member's ids as associated data. Revoking deletes the row (and SQLite's
 * secure_delete overwrites it), so no secret outlives its credential on disk; opened, it stays in a
 * node's memory a minute at most (opened-secrets.ts).
 */
import { newId } from '../../primitives/ids.js';
import type { CredentialRow } from '../../store/schema.js';
import { recordAudit } from '../audit/audit.js';
import type { Actor, ServiceContext } from '../context.js';
import { eventCredential, type RevocationEvents, recordEvent, recordRevocations } from '../webhooks/webhook-events.js';

export type CredentialSecret =
  | { type: 'static'; values: Record<string, string> }
  | { type: 'oauth2'; accessToken: string; refreshToken: string | null; tokenType: string };

export function credentialAad(credentialId: string, serverId: string, memberId: string): string {
  return `credentials|${credentialId}|${serverId}|${memberId}`;
}

export function openCredentialSecret(ctx: ServiceContext, row: Pick<CredentialRow, 'id' | 'server_id' | 'member_id' | 'secret'>): CredentialSecret {
  return ctx.vault.openJson<CredentialSecret>(row.secret, credentialAad(row.id, row.server_id, row.member_id));
}

export interface NewCredential {
  accountId: string;
  serverId: string;
  externalUserId: string;
  provider: string;
  secret: CredentialSecret;
  accessExpiresAt?: string | null;
  scopes?: string[] | null;
  actor: Actor;
  now: string;
  /**
   * What the end user completed, named in the `credential.connected` event. Every path in src/ has
   * one; only tests and benchmarks store credentials directly, without a flow or a form.
   */
  origin?: { flowId: string } | { sessionId: string };
  /** The check the hosted form made of the values before storing them (CONTRACT 8.3), where the provider has one. */
  lastCheck?: { at: string; outcome: 'valid' | 'unreachable' };
}

export interface StoredCredential {
  credentialId: string;
  /** The credential this one replaced, if any. */
  replaced: CredentialRow | null;
  /** The replaced credential's `credential.revoked` event, held until the provider has answered (OAuth). */
  revocations: RevocationEvents;
}

/**
 * Stores a credential, replacing the member's older credential of the same provider, in one
 * transaction (the caller's, where one is open: a form or flow completes in the same commit), with
 * its events. Returns the new id and the replaced row (its secrets are gone from storage once the
 * transaction commits; the caller may still need them to revoke tokens at the provider).
 */
export function storeCredential(ctx: ServiceContext, input: NewCredential): Promise<StoredCredential> {
  return ctx.store.transaction(() => writeCredential(ctx, input));
}

async function writeCredential(ctx: ServiceContext, input: NewCredential): Promise<StoredCredential> {
  const memberId = await ctx.store.audience.ensureMember(input.serverId, input.externalUserId, input.now);
  const [replaced = null] = await ctx.store.credentials.credentialsOf(memberId, input.provider);
  const credentialId = newId('cred');
  const revocations = await recordRevocations(ctx, {
    serverId: input.serverId,
    externalUserId: input.externalUserId,
    rows: replaced ? [replaced] : [],
    at: input.now,
    reason: 'replaced',
    replacedBy: credentialId,
  });
  if (replaced) {
    await ctx.store.credentials.deleteCredentials([replaced.id]);
    await recordAudit(ctx, {
      accountId: input.accountId,
      serverId: input.serverId,
      actor: input.actor,
      action: 'credential.replaced',
      targetId: replaced.id,
      detail: { provider: input.provider, externalUserId: input.externalUserId, type: replaced.type },
      at: input.now,
    });
  }
  await ctx.store.credentials.addCredential({
    id: credentialId,
    server_id: input.serverId,
    member_id: memberId,
    provider: input.provider,
    type: input.secret.type,
    status: 'active',
    secret: ctx.vault.sealJson(input.secret, credentialAad(credentialId, input.serverId, memberId)),
    access_expires_at: input.accessExpiresAt ?? null,
    scopes: input.scopes ? JSON.stringify(input.scopes) : null,
    error_code: null,
    error_message: null,
    connected_at: input.now,
    updated_at: input.now,
    refreshed_at: null,
    refresh_lease_until: null,
    refresh_lease_holder: null,
    refresh_attempted_at: null,
    last_used_at: null,
    last_check_at: input.lastCheck?.at ?? null,
    last_check_outcome: input.lastCheck?.outcome ?? null,
  });
  await recordAudit(ctx, {
    accountId: input.accountId,
    serverId: input.serverId,
    actor: input.actor,
    action: 'credential.connected',
    targetId: credentialId,
    detail: { provider: input.provider, externalUserId: input.externalUserId, type: input.secret.type },
    at: input.now,
  });
  const credential = {
    id: credentialId,
    provider: input.provider,
    type: input.secret.type,
    status: 'active' as const,
    connected_at: input.now,
    updated_at: input.now,
    last_used_at: null,
    last_check_at: input.lastCheck?.at ?? null,
    last_check_outcome: input.lastCheck?.outcome ?? null,
  };
  await recordEvent(ctx, {
    type: 'credential.connected',
    serverId: input.serverId,
    at: input.now,
    data: { externalUserId: input.externalUserId, credential: eventCredential(credential), ...input.origin },
  });
  return { credentialId, replaced, revocations };
}
