/** Servers and their allowed redirect URIs. */
import type { Insertable } from 'kysely';
import { Repository } from './repository.js';
import type { ServersTable } from './schema.js';

export class ServersRepository extends Repository {
  byId(serverId: string) {
    return this.db.selectFrom('servers').selectAll().where('id', '=', serverId).executeTakeFirst();
  }

  /**
   * The server, its row locked until the transaction ends on PostgreSQL (FOR UPDATE), so that checks
   * of a per-server limit made by two transactions at once run one after the other.
   */
  lockForUpdate(serverId: string) {
    const query = this.db.selectFrom('servers').selectAll().where('id', '=', serverId);
    return this.lockedOnPostgres(query, (q) => q.forUpdate()).executeTakeFirst();
  }

  /** The server if it belongs to the account: another account's server is as absent as an unknown id. */
  ofAccount(accountId: string, serverId: string) {
    return this.db
      .selectFrom('servers')
      .select(['id', 'name', 'mode', 'created_at'])
      .where('id', '=', serverId)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
  }

  /** An account's servers, oldest first, each with its current key's hint (null if it somehow has none). */
  listOfAccount(accountId: string) {
    return this.db
      .selectFrom('servers')
      .select((eb) => [
        'servers.id',
        'servers.name',
        'servers.mode',
        'servers.created_at',
        // A subquery rather than a join: two racing rotations could leave two current keys, and the
        // list must still hold each server once.
        eb
          .selectFrom('server_keys')
          .select('server_keys.hint')
          .whereRef('server_keys.server_id', '=', 'servers.id')
          .where('server_keys.expires_at', 'is', null)
          .orderBy('server_keys.created_at', 'desc')
          .limit(1)
          .as('key_hint'),
      ])
      .where('servers.account_id', '=', accountId)
      .orderBy('servers.created_at')
      .orderBy('servers.id')
      .execute();
  }

  async create(server: Insertable<ServersTable>): Promise<void> {
    await this.db.insertInto('servers').values(server).execute();
  }

  async setMode(serverId: string, mode: ServersTable['mode'], at: string): Promise<void> {
    await this.db.updateTable('servers').set({ mode, updated_at: at }).where('id', '=', serverId).execute();
    await this.connections.seenEverywhere();
  }

  async setSecretsReadable(serverId: string, readable: boolean, at: string): Promise<void> {
    await this.db
      .updateTable('servers')
      .set({ secrets_readable: readable ? 1 : 0, updated_at: at })
      .where('id', '=', serverId)
      .execute();
    await this.connections.seenEverywhere();
  }

  /** Adds a URI to the server's allowed list; one already there keeps its place. False when it was there. */
  async allowRedirectUri(serverId: string, uri: string, at: string): Promise<boolean> {
    // RETURNING gives no row for a conflict that did nothing, on both engines.
    const added = await this.db
      .insertInto('server_redirect_uris')
      .values({ server_id: serverId, uri, created_at: at })
      .onConflict((oc) => oc.columns(['server_id', 'uri']).doNothing())
      .returning('uri')
      .executeTakeFirst();
    return added !== undefined;
  }

  /** The allowed redirect URIs, in the order they were added. */
  async redirectUris(serverId: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('server_redirect_uris')
      .select('uri')
      .where('server_id', '=', serverId)
      .orderBy('created_at')
      .orderBy('uri')
      .execute();
    return rows.map((r) => r.uri);
  }

  async isRedirectUriAllowed(serverId: string, uri: string): Promise<boolean> {
    const row = await this.db.selectFrom('server_redirect_uris').select('uri').where('server_id', '=', serverId).where('uri', '=', uri).executeTakeFirst();
    return row !== undefined;
  }

  /** False when the URI was not on the list. */
  async removeRedirectUri(serverId: string, uri: string): Promise<boolean> {
    const result = await this.db.deleteFrom('server_redirect_uris').where('server_id', '=', serverId).where('uri', '=', uri).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }
}
