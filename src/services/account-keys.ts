import { iso } from '../clock.js';
import { newId } from '../ids.js';
import { generateKey, keyDigest, keyHint } from '../keys/format.js';
import type { AccountKeyRow } from '../store/schema.js';
import { recordAudit } from './audit.js';
import { lockAccount, type Actor, type ServiceContext } from './context.js';
import { ServiceError } from './service-error.js';
import { requireWellFormed } from './well-formed.js';

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
  requireWellFormed({ label });
  if (!label || [...label].length > 100) throw new ServiceError('invalid', 'the label must be 1 to 100 characters');
  const environment = (input.environment ?? 'production') as Environment;
  if (!ENVIRONMENTS.includes(environment)) {
    throw new ServiceError('invalid', `the environment must be one of ${ENVIRONMENTS.join(', ')}`);
  }
  const nowDate = ctx.clock.now();
  let expiresAt: string | null = null;
  if (input.expiresAt) {
    const parsed = new Date(input.expiresAt);
    if (Number.isNaN(parsed.getTime())) throw new ServiceError('invalid', 'the expiry must be an RFC 3339 time');
    if (parsed <= nowDate) throw new ServiceError('invalid', 'the expiry must be in the future');
    expiresAt = iso(parsed);
  }
  const now = iso(nowDate);
  const key = generateKey('account');
  const keyId = newId('key');
  await ctx.store.transaction(async () => {
    const trx = ctx.store.current;
    if (!(await lockAccount(trx, input.accountId, now))) throw new ServiceError('not_found', `no account ${input.accountId}`);
    const { count } = await trx
      .selectFrom('account_keys')
      .select((eb) => eb.fn.countAll<string | number>().as('count'))
      .where('account_id', '=', input.accountId)
      .where('revoked_at', 'is', null)
      .executeTakeFirstOrThrow();
    if (Number(count) >= MAX_ACTIVE_ACCOUNT_KEYS) {
      throw new ServiceError('limit', `an account may have at most ${MAX_ACTIVE_ACCOUNT_KEYS} unrevoked keys; revoke one first`);
    }
    await trx
      .insertInto('account_keys')
      .values({
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
      })
      .execute();
    await recordAudit(trx, {
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

/** Revocation is one guarded UPDATE: every node reads the key row on every request, so it holds at once. */
export async function revokeAccountKey(ctx: ServiceContext, keyId: string, actor: Actor): Promise<{ keyId: string; revokedAt: string }> {
  const now = iso(ctx.clock.now());
  return ctx.store.transaction(async () => {
    const trx = ctx.store.current;
    const row = await trx.selectFrom('account_keys').select(['account_id', 'revoked_at', 'hint', 'label']).where('id', '=', keyId).executeTakeFirst();
    if (!row) throw new ServiceError('not_found', `no account key ${keyId}`);
    if (row.revoked_at) return { keyId, revokedAt: row.revoked_at };
    await trx
      .updateTable('account_keys')
      .set({ revoked_at: now, revoked_by: actor })
      .where('id', '=', keyId)
      .where('revoked_at', 'is', null)
      .execute();
    await recordAudit(trx, {
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
  const account = await ctx.store.db.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst();
  if (!account) throw new ServiceError('not_found', `no account ${accountId}`);
  const rows = await ctx.store.db
    .selectFrom('account_keys')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
  return rows.map(accountKeyView);
}
