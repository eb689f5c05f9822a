/** Account API keys and server API keys: creation, listing, revocation, rotation. (The guard's per-request lookups: auth-lookups.ts.) */
import type { Insertable } from 'kysely';
import { Repository } from './repository.js';
import type { AccountKeysTable, ServerKeysTable } from './schema.js';

export class KeysRepository extends Repository {
  // ---- Account API keys ----

  async addAccountKey(key: Insertable<AccountKeysTable>): Promise<void> {
    await this.db.insertInto('account_keys').values(key).execute();
  }

  /** How many of the account's keys are not revoked (expired ones count: they can still be revoked). */
  async countUnrevokedAccountKeys(accountId: string): Promise<number> {
    const { count } = await this.db
      .selectFrom('account_keys')
      .select((eb) => eb.fn.countAll<string | number>().as('count'))
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(count);
  }

  accountKey(keyId: string) {
    return this.db.selectFrom('account_keys').selectAll().where('id', '=', keyId).executeTakeFirst();
  }

  /** The key if it belongs to the account: another account's key is as absent as an unknown id. */
  accountKeyOfAccount(accountId: string, keyId: string) {
    return this.db.selectFrom('account_keys').selectAll().where('id', '=', keyId).where('account_id', '=', accountId).executeTakeFirst();
  }

  /** An account's keys, newest first. */
  accountKeysOf(accountId: string) {
    return this.db.selectFrom('account_keys').selectAll().where('account_id', '=', accountId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
  }

  /** The labels and hints of those of `keyIds` that are the account's keys (another account's never). */
  accountKeyNames(accountId: string, keyIds: readonly string[]) {
    if (keyIds.length === 0) return Promise.resolve([]);
    return this.db.selectFrom('account_keys').select(['id', 'label', 'hint']).where('account_id', '=', accountId).where('id', 'in', keyIds).execute();
  }

  /** One guarded UPDATE: false when the key was revoked already (or does not exist), and then nothing changes. */
  async revokeAccountKey(keyId: string, at: string, by: string): Promise<boolean> {
    const result = await this.db
      .updateTable('account_keys')
      .set({ revoked_at: at, revoked_by: by })
      .where('id', '=', keyId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (result.numUpdatedRows === 0n) return false;
    await this.connections.seenEverywhere();
    return true;
  }

  // ---- Server API keys ----

  async addServerKey(key: Insertable<ServerKeysTable>): Promise<void> {
    await this.db.insertInto('server_keys').values(key).execute();
  }

  /** Gives the server's current keys `endsAt` as their end; keys already in a grace period keep their earlier end. */
  async endCurrentServerKeys(serverId: string, endsAt: string): Promise<void> {
    await this.db.updateTable('server_keys').set({ expires_at: endsAt }).where('server_id', '=', serverId).where('expires_at', 'is', null).execute();
    await this.connections.seenEverywhere();
  }

  /** The server's keys that still open the API at `now` (current, or in their grace period), newest first. */
  liveServerKeys(serverId: string, now: string) {
    return this.db
      .selectFrom('server_keys')
      .select(['hint', 'created_at', 'expires_at'])
      .where('server_id', '=', serverId)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .orderBy('created_at', 'desc')
      .orderBy('id')
      .execute();
  }
}
