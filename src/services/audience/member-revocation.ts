/**
 * A member's revocation (CONTRACT 2.7, DELETE /v1/end-users/{externalUserId}; the dashboard's revoke and
 * "Remove end user"; the Connect page's disconnect): its credentials erased in one transaction with
 * their audit records and webhooks, then each revoked at its provider.
 */
import { iso } from '../../primitives/clock.js';
import { recordAudit } from '../audit/audit.js';
import type { Actor, ServiceContext } from '../context.js';
import { openCredentialSecret } from '../credentials/credentials.js';
import { DomainError } from '../domain-error.js';
import { oauthClientSettings } from '../oauth/client-settings.js';
import { revokeAtProvider } from '../oauth/provider-revocation.js';
import type { ProviderRevocation } from '../webhooks/webhook-events.js';
import { endUserOf, recordRevocations } from '../webhooks/webhook-events.js';
import { endUserNotFound } from './members.js';

export interface RevokedCredential {
  id: string;
  provider: string;
  revokedAt: string;
  providerRevocation: ProviderRevocation;
}

/**
 * Erases the member's credentials (all, or one provider's) and cancels the pending forms and flows
 * they had on this server, in one transaction; without a provider the member leaves the audience
 * (audited as `end_user.removed`, beside each credential's `credential.revoked`).
 * `onlyWithoutCredentials` is the dashboard's "Remove end user", confirmed for a member it showed with
 * none: one that got a credential since is refused, so nothing the user did not see is erased.
 */
export async function revokeMember(
  ctx: ServiceContext,
  input: { accountId: string; serverId: string; externalUserId: string; provider?: string; onlyWithoutCredentials?: boolean; actor: Actor },
): Promise<{ externalUserId: string; revoked: RevokedCredential[] }> {
  const now = iso(ctx.clock.now());
  const { erased, events } = await ctx.store.transaction(async () => {
    // Pending forms and flows first, then the member: the order in which a form or a callback that is
    // completing takes the same rows (its session or flow, then the member), so the two never wait on
    // each other in a cycle. One that completed first is then erased with the rest; one that had not
    // finds itself cancelled.
    await ctx.store.flows.cancelPendingConnections(input.serverId, input.externalUserId, input.provider, now);
    if (!input.provider) await ctx.store.connectSessions.endOpenOf(input.serverId, input.externalUserId, now);
    const member = await ctx.store.audience.lockedProfile(input.serverId, input.externalUserId);
    if (member === undefined) throw endUserNotFound();
    const memberId = member.id;
    const rows = await ctx.store.credentials.credentialsOf(memberId, input.provider);
    if (input.provider && rows.length === 0) {
      throw new DomainError('credential_not_found', {
        field: 'provider',
        // The caller knows whom it asked about; an error never repeats an externalUserId (it may be an email).
        detail: `This end user has no credential of provider "${input.provider}".`,
      });
    }
    if (input.onlyWithoutCredentials && rows.length > 0) {
      throw new DomainError('validation_failed', {
        detail: 'This end user has a credential now. Revoke it first, then remove the end user.',
      });
    }
    await ctx.store.credentials.deleteCredentials(rows.map((r) => r.id));
    if (!input.provider) await ctx.store.audience.removeMember(memberId);
    for (const row of rows) {
      await recordAudit(ctx, {
        accountId: input.accountId,
        serverId: input.serverId,
        actor: input.actor,
        action: 'credential.revoked',
        targetId: row.id,
        detail: { provider: row.provider, externalUserId: input.externalUserId, type: row.type },
        at: now,
      });
    }
    if (!input.provider) {
      await recordAudit(ctx, {
        accountId: input.accountId,
        serverId: input.serverId,
        actor: input.actor,
        action: 'end_user.removed',
        targetId: memberId,
        detail: { externalUserId: input.externalUserId, credentials: rows.length },
        at: now,
      });
    }
    // The profile as read before the member's row went: the events describe the member as it was.
    const revocations = await recordRevocations(ctx, {
      serverId: input.serverId,
      externalUserId: input.externalUserId,
      rows,
      at: now,
      reason: 'revoked',
      endUser: endUserOf(member),
    });
    return { erased: rows, events: revocations };
  });
  // The secrets are gone from storage now; the copies in memory serve only to ask the providers.
  const revoked = await Promise.all(
    erased.map(async (row) => {
      const settings = row.type === 'oauth2' ? await oauthClientSettings(ctx, input.serverId, row.provider) : null;
      const providerRevocation = await revokeAtProvider(settings, openCredentialSecret(ctx, row));
      await events.answered(row.id, providerRevocation);
      return { id: row.id, provider: row.provider, revokedAt: now, providerRevocation };
    }),
  );
  return { externalUserId: input.externalUserId, revoked };
}
