/**
 * What the management guard reads and writes per request, with the key lookups answered from memory.
 *
 * Each node keeps the account keys and server keys it has seen, by digest, and reads the auth version
 * (one row, one prepared statement) once per request: every change that can refuse a key bumps that
 * version in its own transaction (migration 007's triggers), so a request that starts after a
 * revocation, a rotation or a mode change commits, on any node, finds a new version, empties the cache
 * and reads the keys afresh. Expiry needs no version: the guard compares the cached expiresAt with
 * the clock on every request. Unknown digests are not cached: a guess costs one indexed read, and the
 * per-address failure limit bounds how many a client makes.
 *
 * The reads run on the per-request reader (Connections.reader); the writes are guarded UPDATEs, at
 * most once a minute per key.
 */

import { InsertionOrderedMap } from '../primitives/insertion-ordered-map.js';
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
}

/** Keys kept per kind; past this the oldest entry goes (a miss then costs one indexed read). */
const MAX_CACHED_KEYS = 10_000;

/** At most MAX_CACHED_KEYS entries: setting one more drops the oldest. */
class BoundedMap<V> extends InsertionOrderedMap<V> {
  override set(key: string, value: V): void {
    if (this.size >= MAX_CACHED_KEYS && this.get(key) === undefined) this.delete(this.oldest()![0]);
    super.set(key, value);
  }
}

export class AuthLookups extends Repository {
  #version: string | null = null;
  readonly #accountKeys = new BoundedMap<AccountKeyLookup>();
  readonly #serverKeys = new BoundedMap<ServerKeyLookup>();
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
        .select(['server_keys.id', 'server_keys.hint', 'server_keys.expires_at', 'servers.id as server_id', 'servers.account_id', 'servers.mode'])
        .where('server_keys.digest', '=', digest),
    );
  }

  /** The auth version this node last read (null before the first request). */
  get knownVersion(): string | null {
    return this.#version;
  }

  /**
   * A version read by sync: a newer one empties the cache. Only forward: reads that finish out of
   * order must not bring back an older version. (The member read of GET /v1/end-users/{id} returns the
   * version too; where it differs, the guard's recheck comes here through sync.)
   */
  #observe(version: string): void {
    if (this.#version === null || BigInt(version) > BigInt(this.#version)) this.#reset(version);
  }

  /**
   * Called once per request before any cached lookup. Returns the version the request runs under
   * (text: PostgreSQL's bigint arrives as a string, SQLite's as a number). A lookup that misses caches
   * its row only if no newer version was seen meanwhile, so a row read before a change can never
   * outlive the change in the cache.
   */
  async sync(): Promise<string> {
    const [row] = await this.#readVersion();
    const version = String(row!.version);
    this.#observe(version);
    return version;
  }

  #reset(version: string) {
    this.#accountKeys.clear();
    this.#serverKeys.clear();
    this.#version = version;
  }

  /** The account key with this digest, from memory while `version` (from sync) holds. */
  accountKey(digest: string, version: string): Promise<AccountKeyLookup | undefined> {
    return this.#cached(this.#accountKeys, digest, version, this.#accountKeyByDigest);
  }

  /** The server key with this digest and its server, from memory while `version` (from sync) holds. */
  serverKey(digest: string, version: string): Promise<ServerKeyLookup | undefined> {
    return this.#cached(this.#serverKeys, digest, version, this.#serverKeyByDigest);
  }

  /** The account key with this digest, from the database (the browser-exposure record, outside the guard's path). */
  async accountKeyByDigest(digest: string): Promise<AccountKeyLookup | undefined> {
    const [row] = await this.#accountKeyByDigest(digest);
    return row;
  }

  async #cached<Row>(cache: BoundedMap<Row>, digest: string, version: string, read: (digest: string) => Promise<Row[]>): Promise<Row | undefined> {
    const cached = cache.get(digest);
    if (cached) return cached;
    this.misses += 1;
    const [row] = await read(digest);
    if (row && version === this.#version) cache.set(digest, row);
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
