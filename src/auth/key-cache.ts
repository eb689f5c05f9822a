/**
 * The guard's keys, answered from memory on every node while the auth version holds.
 *
 * Each node keeps the account keys and server keys it has seen, by digest, and learns the auth version
 * once per request (one row, one prepared statement: store/auth-lookups.ts; on the member read, folded
 * into the read's own statement and confirmed by its handler before it acts): every change that can
 * refuse a key, or change what the guard tells the handler (a server made write-only), bumps that
 * version in its own transaction (the triggers of migrations 007 and 015), so a request that starts
 * after a revocation, a rotation, a mode change or a write-only switch commits, on any node, finds a new
 * version, empties the cache and reads the keys afresh. (A proxied call takes the version from its
 * read, which on PostgreSQL a node keeps in memory: a change made through Keyward is answered only once
 * every node has heard of it, store/change-feed.ts.) Expiry needs no version: the guard compares
 * the cached expiresAt with the clock on every request. Unknown digests are not cached: a guess costs
 * one indexed read, and the per-address failure limit bounds how many a client makes.
 *
 * The rows kept hold digests, hints and dates, never a key itself.
 */
import { BoundedMap } from '../primitives/insertion-ordered-map.js';
import type { AccountKeyLookup, AuthLookups, ServerKeyLookup } from '../store/auth-lookups.js';

/** Keys kept per kind; past this the oldest entry goes (a miss then costs one indexed read). */
const MAX_CACHED_KEYS = 10_000;

export class KeyCache {
  #version: string | null = null;
  readonly #accountKeys = new BoundedMap<AccountKeyLookup>(MAX_CACHED_KEYS);
  readonly #serverKeys = new BoundedMap<ServerKeyLookup>(MAX_CACHED_KEYS);

  constructor(private readonly lookups: AuthLookups) {}

  /** The auth version this node last read (null before the first request). */
  get knownVersion(): string | null {
    return this.#version;
  }

  /**
   * Reads the auth version; a newer one than known empties the cache. Only forward: reads that finish
   * out of order must not bring back an older version. Returns the version the request runs under.
   */
  async sync(): Promise<string> {
    const version = await this.lookups.authVersion();
    this.#observe(version);
    return version;
  }

  #observe(version: string): void {
    if (this.#version === null || BigInt(version) > BigInt(this.#version)) {
      this.#accountKeys.clear();
      this.#serverKeys.clear();
      this.#version = version;
    }
  }

  /** The account key with this digest if this node holds it under `version`; no I/O. */
  cachedAccountKey(digest: string, version: string): AccountKeyLookup | undefined {
    return version === this.#version ? this.#accountKeys.get(digest) : undefined;
  }

  /** The server key with this digest if this node holds it under `version`; no I/O. */
  cachedServerKey(digest: string, version: string): ServerKeyLookup | undefined {
    return version === this.#version ? this.#serverKeys.get(digest) : undefined;
  }

  /** The account key with this digest, from memory while `version` (from sync) holds. */
  async accountKey(digest: string, version: string): Promise<AccountKeyLookup | undefined> {
    const cached = this.#accountKeys.get(digest);
    if (cached) return cached;
    const row = await this.lookups.guardAccountKey(digest);
    // Kept only if no newer version was seen meanwhile: a row read before a change never outlives it.
    if (row && version === this.#version) this.#accountKeys.set(digest, row);
    return row;
  }

  /** The server key with this digest and its server, from memory while `version` (from sync) holds. */
  async serverKey(digest: string, version: string): Promise<ServerKeyLookup | undefined> {
    const cached = this.#serverKeys.get(digest);
    if (cached) return cached;
    const row = await this.lookups.guardServerKey(digest);
    if (row && version === this.#version) this.#serverKeys.set(digest, row);
    return row;
  }
}
