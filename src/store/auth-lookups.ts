/**
 * What the management guard reads and writes per request: the auth version (one row), the keys by
 * digest, and the guarded writes of lastUsedAt and a browser exposure. The guard keeps the keys it
 * read in memory while the version holds (auth/key-cache.ts).
 *
 * The reads run on the per-request reader (Connections.reader); the writes are guarded UPDATEs, at
 * most once a minute per key.
 */

import type { Connections } from './connections.js';
import { preparedQuery } from './prepared.js';
import { Repository } from './repository.js';

export interface AccountKeyLookup {
  id: string;
  account_id: string;
  hint: string;
  revoked_at: string | null;
  expires_at: string | null;
  last_used_at: string | null;
}

export interface ServerKeyLookup {
  id: string;
  hint: string;
  expires_at: string | null;
  server_id: string;
  account_id: string;
  mode: 'business' | 'personal';
  /** 0 for a write-only server (CONTRACT 8.2). */
  secrets_readable: number;
}

export class AuthLookups extends Repository {
  /** The guard's key lookups that went to the database since start (what a test checks the cache by). */
  misses = 0;
  readonly #readVersion;
  readonly #accountKeyByDigest;
  readonly #serverKeyByDigest;

  constructor(connections: Connections) {
    super(connections);
    const { root, reader } = connections;
    this.#readVersion = preparedQuery(reader, 0, () => root.selectFrom('auth_version').select('version').where('id', '=', 1));
    this.#accountKeyByDigest = preparedQuery(reader, 1, (digest: string) =>
      root.selectFrom('account_keys').select(['id', 'account_id', 'hint', 'revoked_at', 'expires_at', 'last_used_at']).where('digest', '=', digest),
    );
    this.#serverKeyByDigest = preparedQuery(reader, 1, (digest: string) =>
      root
        .selectFrom('server_keys')
        .innerJoin('servers', 'servers.id', 'server_keys.server_id')
        .select([
          'server_keys.id',
          'server_keys.hint',
          'server_keys.expires_at',
          'servers.id as server_id',
          'servers.account_id',
          'servers.mode',
          'servers.secrets_readable',
        ])
        .where('server_keys.digest', '=', digest),
    );
  }

  /** The auth version (text: PostgreSQL's bigint arrives as a string, SQLite's as a number). */
  async authVersion(): Promise<string> {
    const [row] = await this.#readVersion();
    return String(row!.version);
  }

  /** The account key with this digest, for the guard (counted: its cache missed). */
  async guardAccountKey(digest: string): Promise<AccountKeyLookup | undefined> {
    this.misses += 1;
    const [row] = await this.#accountKeyByDigest(digest);
    return row;
  }

  /** The server key with this digest and its server, for the guard (counted: its cache missed). */
  async guardServerKey(digest: string): Promise<ServerKeyLookup | undefined> {
    this.misses += 1;
    const [row] = await this.#serverKeyByDigest(digest);
    return row;
  }

  /** The account key with this digest, from the database (the browser-exposure record, outside the guard's path). */
  async accountKeyByDigest(digest: string): Promise<AccountKeyLookup | undefined> {
    const [row] = await this.#accountKeyByDigest(digest);
    return row;
  }

  /**
   * lastUsedAt, unless another node wrote a time after `threshold` already, or the key was revoked
   * meanwhile (a request admitted from memory just before this node saw the revocation).
   */
  async touch(keyId: string, at: string, threshold: string): Promise<void> {
    await this.db
      .updateTable('account_keys')
      .set({ last_used_at: at })
      .where('id', '=', keyId)
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', threshold)]))
      .execute();
  }

  /** Records a browser origin on the key, unless one was recorded after `threshold`; true when it wrote. */
  async recordExposure(keyId: string, origin: string, at: string, threshold: string): Promise<boolean> {
    const result = await this.db
      .updateTable('account_keys')
      .set({ exposed_origin: origin, exposed_at: at })
      .where('id', '=', keyId)
      .where((eb) => eb.or([eb('exposed_at', 'is', null), eb('exposed_at', '<', threshold)]))
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }
}
