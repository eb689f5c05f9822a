/**
 * Repositories run on the transaction of their call chain (store/connections.ts). On SQLite, Kysely
 * has one connection: a query sent to it from inside an open transaction, on the root connection,
 * queues behind that transaction, which waits for the query: it never finishes. Through the store a
 * nested call runs on the open transaction instead, whatever depth it is called at.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { createAccountKey, listAccountKeys, revokeAccountKey } from '../../src/services/keys/account-keys.js';
import { ENGINES } from '../helpers/databases.js';
import { startWithTenant, type Tenant, type TestApp } from '../helpers/test-app.js';

const TIMED_OUT = Symbol('timed out');
function within<T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  return Promise.race([promise, new Promise<typeof TIMED_OUT>((resolve) => setTimeout(() => resolve(TIMED_OUT), ms).unref())]);
}

describe.each(ENGINES)('transactions of the store on %s', (engine) => {
  let t: TestApp, tenant: Tenant;
  beforeAll(async () => {
    ({ t, tenant } = await startWithTenant(engine));
  });
  afterAll(() => t.close());

  const revokedAt = async (keyId: string) => (await listAccountKeys(t.ctx, tenant.accountId)).find((key) => key.id === keyId)?.revokedAt ?? null;

  it('runs a service called inside a transaction on that transaction, which sees its own writes', async () => {
    const outcome = await within(
      t.ctx.store.transaction(async () => {
        // revokeAccountKey opens a transaction of its own: it joins this one.
        await revokeAccountKey(t.ctx, tenant.accountKeyId, CLI_ACTOR);
        // A read from a service, two calls deep: on SQLite this used to wait forever.
        return revokedAt(tenant.accountKeyId);
      }),
      5_000,
    );
    expect(outcome).not.toBe(TIMED_OUT);
    expect(outcome).toEqual(expect.any(String));
  });

  it('rolls back what the nested calls wrote when the outer transaction fails', async () => {
    const { keyId } = await createAccountKey(t.ctx, { accountId: tenant.accountId, label: 'rolled-back', actor: CLI_ACTOR });
    const failure = new Error('the outer step failed');
    await expect(
      t.ctx.store.transaction(async () => {
        await revokeAccountKey(t.ctx, keyId, CLI_ACTOR);
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await revokedAt(keyId)).toBeNull();
  });

  // SQLite runs one transaction at a time (one connection, BEGIN IMMEDIATE): two chains are only ever
  // open together on PostgreSQL.
  if (engine === 'postgres') {
    it('keeps one call chain on its transaction while another transaction ends', async () => {
      const { keyId } = await createAccountKey(t.ctx, { accountId: tenant.accountId, label: 'two-chains', actor: CLI_ACTOR });
      let releaseFirst!: () => void;
      const released = new Promise<void>((resolve) => (releaseFirst = resolve));
      const first = t.ctx.store.transaction(() => released);
      const second = t.ctx.store.transaction(async () => {
        await revokeAccountKey(t.ctx, keyId, CLI_ACTOR);
        // The first transaction ends while this one is open; this chain must still read on its own,
        // uncommitted transaction (it would read null on the root connection).
        releaseFirst();
        await first;
        return revokedAt(keyId);
      });
      expect(await within(second, 5_000)).toEqual(expect.any(String));
    });
  }

  if (engine === 'sqlite') {
    it('shows the hazard it prevents: the root connection inside an open transaction never answers', async () => {
      let query: Promise<unknown> | undefined;
      const outcome = await t.ctx.store.transaction(async () => {
        query = t.ctx.store.db.selectFrom('accounts').select('id').execute();
        return within(query, 300);
      });
      expect(outcome).toBe(TIMED_OUT);
      // Once the transaction is over, the queued query runs.
      await expect(query).resolves.toEqual(expect.any(Array));
    });
  }
});
