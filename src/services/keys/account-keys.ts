import { iso } from '../../primitives/clock.js';
import { newId } from '../../primitives/ids.js';
import type { AccountKeyRow } from '../../store/schema.js';
import { recordAudit } from '../audit/audit.js';
import type { Actor, ServiceContext } from '../context.js';
import { DomainError, invalid } from '../domain-error.js';
import { requireWellFormed } from '../well-formed.js';
import { generateKey, keyDigest, keyHint } from './key-format.js';

export const MAX_ACTIVE_ACCOUNT_KEYS = 50;
export const ENVIRONMENTS = ['production', 'staging', 'development', 'other'] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

/** An account key as shown after creation: never the key, only its hint. */
export interface AccountKeyView {
  id: string;
  label: string;
  environment: Environment;
  hint: string;
  createdAt: string;
  createdBy: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
  revokedBy: string | null;
  browserExposure: { origin: string; at: string } | null;
}

export function accountKeyView(row: AccountKeyRow): AccountKeyView {
  return {
    id: row.id,
    label: row.label,
    environment: row.environment,
    hint: row.hint,
    createdAt: row.created_at,
    createdBy: row.created_by,
    lastUsedAt: row.last_used_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    revokedBy: row.revoked_by,
    browserExposure: row.exposed_origin && row.exposed_at ? { origin: row.exposed_origin, at: row.exposed_at } : null,
  };
}

export async function createAccountKey(
  ctx: ServiceContext,
  input: { accountId: string; label: string; environment?: string; expiresAt?: string | null; actor: Actor },
): Promise<{ keyId: string; key: string }> {
  const label = input.label.trim();
  requireWellFormed({ label: ['label', label] });
  if (!label) throw invalid('label', 'enter a label, such as the name of the backend that will use the key');
  if ([...label].length > 100) throw invalid('label', 'the label must be at most 100 characters');
  const environment = (input.environment ?? 'production') as Environment;
  if (!ENVIRONMENTS.includes(environment)) {
    throw invalid('environment', `the environment must be one of ${ENVIRONMENTS.join(', ')}`);
  }
  const nowDate = ctx.clock.now();
  let expiresAt: string | null = null;
  if (input.expiresAt) {
    const parsed = new Date(input.expiresAt);
    if (Number.isNaN(parsed.getTime())) throw invalid('expiresAt', 'the expiry must be an RFC 3339 time');
    if (parsed <= nowDate) throw invalid('expiresAt', 'the expiry must be in the future');
    expiresAt = iso(parsed);
  }
  const now = iso(nowDate);
  const key = generateKey('account');
  const keyId = newId('key');
  await ctx.store.transaction(async () => {
    // The account row locked first, so two creations at once cannot both pass the count.
    if (!(await ctx.store.accounts.lock(input.accountId, now))) throw new DomainError('account_not_found', { detail: `no account ${input.accountId}` });
    if ((await ctx.store.keys.countUnrevokedAccountKeys(input.accountId)) >= MAX_ACTIVE_ACCOUNT_KEYS) {
      throw new DomainError('key_limit_reached', {
        detail: `this account has ${MAX_ACTIVE_ACCOUNT_KEYS} keys that are not revoked, the most it may have. Revoke one you no longer use, then generate the new one.`,
      });
    }
    await ctx.store.keys.addAccountKey({
      id: keyId,
      account_id: input.accountId,
      label,
      environment,
      digest: keyDigest(key),
      hint: keyHint(key),
      created_at: now,
      created_by: input.actor,
      last_used_at: null,
      expires_at: expiresAt,
      revoked_at: null,
      revoked_by: null,
      exposed_origin: null,
      exposed_at: null,
    });
    await recordAudit(ctx, {
      accountId: input.accountId,
      actor: input.actor,
      action: 'account_key.created',
      targetId: keyId,
      detail: { label, environment, hint: keyHint(key) },
      at: now,
    });
  });
  return { keyId, key };
}

/** Revocation is one guarded UPDATE, which the guard of every node sees on its very next request. */
export async function revokeAccountKey(ctx: ServiceContext, keyId: string, actor: Actor): Promise<{ keyId: string; revokedAt: string }> {
  const now = iso(ctx.clock.now());
  return ctx.store.transaction(async () => {
    const row = await ctx.store.keys.accountKey(keyId);
    if (!row) throw new DomainError('account_key_not_found', { detail: `no account key ${keyId}` });
    if (row.revoked_at) return { keyId, revokedAt: row.revoked_at };
    if (!(await ctx.store.keys.revokeAccountKey(keyId, now, actor))) {
      // Another revocation committed between the read and the UPDATE (PostgreSQL reads before the row
      // lock): that one revoked the key and wrote the event; this one reports its time.
      const revoked = await ctx.store.keys.accountKey(keyId);
      return { keyId, revokedAt: revoked?.revoked_at ?? now };
    }
    await recordAudit(ctx, {
      accountId: row.account_id,
      actor,
      action: 'account_key.revoked',
      targetId: keyId,
      detail: { label: row.label, hint: row.hint },
      at: now,
    });
    return { keyId, revokedAt: now };
  });
}

export async function listAccountKeys(ctx: ServiceContext, accountId: string): Promise<AccountKeyView[]> {
  if (!(await ctx.store.accounts.exists(accountId))) throw new DomainError('account_not_found', { detail: `no account ${accountId}` });
  return (await ctx.store.keys.accountKeysOf(accountId)).map(accountKeyView);
}
