/**
 * The reads and writes the management guard makes on every request. Each is one indexed statement;
 * lastUsedAt and the browser-exposure record are guarded UPDATEs (at most once a minute), never a
 * read-modify-write.
 */
import { iso } from '../clock.js';
import { recordAudit } from './audit.js';
import type { ServiceContext } from './context.js';

const TOUCH_INTERVAL_MS = 60_000;

export async function findAccountKeyByDigest(ctx: ServiceContext, digest: string) {
  return ctx.store.keys.accountKeyByDigest(digest);
}

export async function findServerKeyByDigest(ctx: ServiceContext, digest: string) {
  return ctx.store.keys.serverKeyByDigest(digest);
}

export async function touchAccountKey(ctx: ServiceContext, keyId: string, lastUsedAt: string | null, now: Date): Promise<void> {
  const threshold = iso(new Date(now.getTime() - TOUCH_INTERVAL_MS));
  if (lastUsedAt !== null && lastUsedAt > threshold) return;
  await ctx.store.db
    .updateTable('account_keys')
    .set({ last_used_at: iso(now) })
    .where('id', '=', keyId)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', threshold)]))
    .execute();
}

/** A live account key was sent from a browser: remember where, for the dashboard's warning. */
export async function recordBrowserExposure(ctx: ServiceContext, digest: string, origin: string, now: Date): Promise<void> {
  const key = await findAccountKeyByDigest(ctx, digest);
  const at = iso(now);
  // Only a live key: a revoked or expired one no longer opens anything, so it warrants no warning.
  if (!key || key.revoked_at || (key.expires_at && key.expires_at <= at)) return;
  const threshold = iso(new Date(now.getTime() - TOUCH_INTERVAL_MS));
  await ctx.store.transaction(async () => {
    const trx = ctx.store.current;
    const result = await trx
      .updateTable('account_keys')
      .set({ exposed_origin: origin, exposed_at: at })
      .where('id', '=', key.id)
      .where((eb) => eb.or([eb('exposed_at', 'is', null), eb('exposed_at', '<', threshold)]))
      .executeTakeFirst();
    if (result.numUpdatedRows === 0n) return;
    await recordAudit(trx, {
      accountId: key.account_id,
      actor: 'browser',
      action: 'account_key.browser_exposure',
      targetId: key.id,
      detail: { origin, hint: key.hint },
      at,
    });
  });
}
