/**
 * Checking a stored static credential (CONTRACT 8.3): on demand (POST /v1/end-users/{id}/verify) and in
 * the background (background-checks.ts). The call itself is the gateway's (gateway/verify-request.ts),
 * made outside any transaction; what it came to is then written in one: the check's time and outcome,
 * and for a refusal the credential turned to needs_reauth with its `credential.needs_reauth` event. A
 * later valid outcome does not turn it back: the end user connects again. A check is not a use.
 */
import type { StaticProvider } from '../../catalog/provider-definition.js';
import { iso } from '../../primitives/clock.js';
import type { CheckOutcome, CredentialRow } from '../../store/schema.js';
import { endUserNotFound } from '../audience/members.js';
import { recordAudit } from '../audit/audit.js';
import type { Actor, ServiceContext } from '../context.js';
import { openCredentialSecret } from '../credentials/credentials.js';
import { DomainError } from '../domain-error.js';
import { type CheckResult, checkableApi, checkValues } from '../gateway/verify-request.js';
import { findServerProvider } from '../providers/server-providers.js';
import { eventCredential, recordEvent } from '../webhooks/webhook-events.js';

/** The error a credential whose values its provider refused carries (a credential error, not an HTTP one). */
export const CREDENTIAL_REJECTED = 'credential_rejected';

/** The static provider a credential belongs to, where it still exists (the catalog's, or the server's own). */
export async function staticProviderOf(ctx: ServiceContext, row: Pick<CredentialRow, 'server_id' | 'provider'>): Promise<StaticProvider | null> {
  const found = await findServerProvider(ctx, row.server_id, row.provider);
  return found?.provider.kind === 'static' ? found.provider : null;
}

/** The message of a refusal: which provider refused, with what status, and what it means. */
function rejectionMessage(provider: StaticProvider, status: number | null): string {
  return `${provider.name} refused these credentials (HTTP ${status ?? 401}) when Keyward checked them: the end user must connect again.`;
}

/**
 * Checks the credential's stored values at its provider, which has a verify request, and records the
 * outcome. `audit` names who asked, where someone did (the background check is not audited, as the
 * background refresh is not).
 */
export async function checkStoredCredential(
  ctx: ServiceContext,
  row: CredentialRow,
  provider: StaticProvider,
  audit?: { accountId: string; actor: Actor },
): Promise<CheckResult> {
  const secret = openCredentialSecret(ctx, row);
  if (secret.type !== 'static') throw new Error('a static credential holds OAuth tokens');
  const result = (await checkValues(ctx, provider, secret.values)) ?? { outcome: 'unreachable' as const, at: iso(ctx.clock.now()), status: null };
  await recordOutcome(ctx, row, provider, result, audit);
  return result;
}

/** The outcome, the refusal's change of state and its event, and the audit entry, in one transaction. */
async function recordOutcome(
  ctx: ServiceContext,
  row: CredentialRow,
  provider: StaticProvider,
  result: CheckResult,
  audit?: { accountId: string; actor: Actor },
) {
  const { outcome, at } = result;
  const message = outcome === 'rejected' ? rejectionMessage(provider, result.status) : null;
  await ctx.store.transaction(async () => {
    const turned = await ctx.store.credentials.recordCheck(row.id, {
      at,
      outcome,
      ...(message ? { rejected: { errorCode: CREDENTIAL_REJECTED, message } } : {}),
    });
    if (turned && message) {
      const changed = { ...row, status: 'needs_reauth' as const, updated_at: at, last_check_at: at, last_check_outcome: outcome };
      await recordEvent(ctx, {
        type: 'credential.needs_reauth',
        serverId: row.server_id,
        at,
        data: { externalUserId: row.external_user_id, credential: eventCredential(changed), error: { code: CREDENTIAL_REJECTED, message } },
      });
    }
    if (audit) {
      await recordAudit(ctx, {
        accountId: audit.accountId,
        serverId: row.server_id,
        actor: audit.actor,
        action: 'credential.checked',
        targetId: row.id,
        detail: { provider: row.provider, externalUserId: row.external_user_id, outcome, ...(result.status !== null ? { status: result.status } : {}) },
        at,
      });
    }
  });
}

/** Stamps a credential the background check could not check (its provider has no verify request): its turn comes round again, lastCheck stays null. */
export async function passOver(ctx: ServiceContext, row: Pick<CredentialRow, 'id'>): Promise<void> {
  await ctx.store.credentials.recordCheck(row.id, { at: iso(ctx.clock.now()), outcome: null });
}

export interface VerifyAnswer {
  provider: string;
  outcome: CheckOutcome;
  at: string;
}

/**
 * POST /v1/end-users/{externalUserId}/verify?provider=P: the member's credential of that provider
 * checked now. Refused where the member or the credential does not exist, for an OAuth credential
 * (its refresh is what proves it), and where the provider has no verify request (nothing to check with).
 */
export async function verifyMemberCredential(
  ctx: ServiceContext,
  input: { accountId: string; serverId: string; externalUserId: string; provider: string; actor: Actor },
): Promise<VerifyAnswer> {
  const memberId = await ctx.store.audience.memberId(input.serverId, input.externalUserId);
  if (memberId === undefined) {
    throw endUserNotFound();
  }
  const [row] = await ctx.store.credentials.credentialsOf(memberId, input.provider);
  if (!row) {
    throw new DomainError('credential_not_found', { field: 'provider', detail: `This end user has no credential of provider "${input.provider}".` });
  }
  if (row.type !== 'static') {
    throw new DomainError('provider_auth_mismatch', {
      detail: `The ${input.provider} credential is an OAuth one: only static credentials are checked. Its token is proven by its refresh (GET /v1/end-users/{externalUserId}).`,
    });
  }
  const provider = await staticProviderOf(ctx, row);
  if (!provider || !checkableApi(provider)) {
    throw new DomainError('proxy_not_supported', {
      detail: `${provider?.name ?? input.provider} has no verify request, so Keyward cannot check its credentials. A custom provider takes one with --verify "GET /path".`,
    });
  }
  const { outcome, at } = await checkStoredCredential(ctx, row, provider, { accountId: input.accountId, actor: input.actor });
  return { provider: row.provider, outcome, at };
}
