/**
 * A read answered from memory until a change is committed to the database, by any connection of any
 * process. On SQLite any commit: its change mark (PRAGMA data_version on the reader, ~3 µs) moves with every
 * commit made elsewhere, so a value kept under the mark it was read at is exactly what the statement
 * would return while the mark holds. A revocation, a refresh, a key change, a CLI command beside the
 * service: each is a commit, so each is seen by the very next call. On PostgreSQL the mark is the
 * node's change feed (change-feed.ts): it moves when a commit that changes a kept read is notified,
 * and Keyward's own changes that close a door are answered only once every node has moved it; an
 * operator's SQL is seen once its notice arrives, a moment after its commit. (A credential's
 * bookkeeping, its lastUsedAt, check and refresh lease, moves no mark there: a kept read's may be
 * stale, and nothing may act on them: token-refresh.ts takes the row its lease returns.)
 *
 * The mark is taken once per turn of the event loop, in its check phase, for every call that asked
 * for it in that turn (markEachTurn below): taken per call, it cost ~27 µs a call in the proxy's bench
 * (two fcntl locks and SQLite's read transaction, against 3.4 µs in a loop); once a turn, ~7 µs
 * (bench/RESULTS.md). Each call's mark is still taken after the call asked, so every change
 * acknowledged before it is seen, as with a mark of its own.
 *
 * The same object is handed out while it is kept, so callers must not change it, and may key what
 * they work out from it by it (a WeakMap: gone with it). Everything kept is dropped at the first call
 * after a commit, and at the latest a minute after it was kept, so that nothing worked out from a read
 * (an opened secret) outlives it for long on a node that went quiet.
 */
import { clearEvery, InsertionOrderedMap } from '../primitives/insertion-ordered-map.js';
import type { ChangeMark } from './connections.js';

/** How long anything is kept at most, whatever the mark says. */
const KEPT_AT_MOST_MS = 60_000;

/** How much a ReadsUntilChange keeps at most, and which values are worth a place. */
export interface KeptBounds<T> {
  /** Values kept at most; past it the oldest goes (a miss costs only the read). */
  values: number;
  /**
   * Bytes kept at most, as `bytesOf` counts them; past it the oldest go. Values are counted as well
   * as bounded: they are rows, whose size the stored data decides, not this process.
   */
  bytes: number;
  bytesOf: (value: T) => number;
  /** Which values are worth a place (a read that found nothing is not: anyone can ask for any key). */
  worthKeeping?: (value: T) => boolean;
}

interface Kept<T> {
  value: T;
  bytes: number;
}

/**
 * The change mark, taken once in the check phase of the turn for every call that asked during it
 * (after the sockets that were ready in this turn have all been read, as statements-together.ts
 * gathers PostgreSQL's reads). A call asking in the check phase itself waits for the next turn's.
 */
function markEachTurn(take: ChangeMark): () => Promise<number> {
  let next: Promise<number> | null = null;
  const takeNow = (resolve: (mark: number) => void, reject: (error: unknown) => void) => {
    next = null;
    try {
      resolve(take());
    } catch (error) {
      reject(error);
    }
  };
  return () => {
    next ??= new Promise<number>((resolve, reject) => setImmediate(takeNow, resolve, reject));
    return next;
  };
}

export class ReadsUntilChange<T> {
  readonly #changeMark: (() => Promise<number>) | null;
  #mark: number | null = null;
  readonly #kept = new InsertionOrderedMap<Kept<T>>();
  #bytes = 0;

  constructor(
    changeMark: ChangeMark | null,
    private readonly bounds: KeptBounds<T>,
  ) {
    this.#changeMark = changeMark === null ? null : markEachTurn(changeMark);
    if (changeMark !== null) clearEvery(this, KEPT_AT_MOST_MS);
  }

  /** Bytes kept now, as the bounds' `bytesOf` counts them. */
  get bytesKept(): number {
    return this.#bytes;
  }

  /** Lets go of everything kept. */
  clear(): void {
    this.#kept.clear();
    this.#bytes = 0;
  }

  /** The value kept under `key` while nothing was committed since it was read; else `read()`'s, kept. */
  async get(key: string, read: () => Promise<T>): Promise<T> {
    if (this.#changeMark === null) return read();
    const mark = await this.#changeMark();
    if (mark !== this.#mark) {
      this.clear();
      this.#mark = mark;
    }
    const kept = this.#kept.get(key);
    if (kept !== undefined) return kept.value;
    // `read` runs its statement synchronously, after the mark was taken (the turn's other calls may
    // have read in between): what it returns is that state or a later one (a later one moved the
    // mark, so the next call reads again). Where another call saw the mark move meanwhile, this value
    // may be older than what is kept now: not kept.
    const value = await read();
    if (this.#mark === mark && (this.bounds.worthKeeping?.(value) ?? true)) this.#keep(key, value);
    return value;
  }

  #keep(key: string, value: T): void {
    const bytes = this.bounds.bytesOf(value);
    if (bytes > this.bounds.bytes) return;
    const before = this.#kept.get(key);
    if (before !== undefined) {
      this.#kept.delete(key);
      this.#bytes -= before.bytes;
    }
    while (this.#kept.size >= this.bounds.values || this.#bytes + bytes > this.bounds.bytes) {
      const [oldestKey, oldest] = this.#kept.oldest()!;
      this.#kept.delete(oldestKey);
      this.#bytes -= oldest.bytes;
    }
    this.#kept.set(key, { value, bytes });
    this.#bytes += bytes;
  }
}
