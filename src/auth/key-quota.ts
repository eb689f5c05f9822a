/**
 * The per-key rate limit, held across every node that shares the database (CONTRACT 2.2: never more
 * than the limit, at most 10% fewer), without a database write per request.
 *
 * Windows are one minute long, per key, starting at the key's first request (the row in
 * rate_limit_windows says when, for every node). A node leases a share of the key's remaining quota
 * for the current window in one guarded statement (min(wanted, limit − granted)), spends it in
 * memory, and leases again when it runs out. What the nodes lease is never more than the limit, so
 * they cannot let more through; what they can fail to use is the part of their last leases still
 * unspent when the key's quota runs out. A lease is about 5% of the limit divided by the nodes leasing
 * for the key, at least 1 (the statement counts the nodes and sizes it: RateLimitsRepository.lease),
 * so that unspent leases hold back less than 10% of the limit between them, even while nodes join;
 * with a lease of 1 nothing is ever held back, so small limits are exact. When a window ends nothing
 * needs returning; a node that stops gracefully gives back what it holds (close), and a node that
 * dies holding a lease loses that share until the window ends.
 *
 * Requests on one node that find its share empty wait together on one lease statement, which asks
 * for enough to serve them all.
 */
import type { Clock } from '../primitives/clock.js';
import { InsertionOrderedMap } from '../primitives/insertion-ordered-map.js';
import type { RateLimitsRepository } from '../store/rate-limits-repository.js';
import { secondsUntil, WINDOW_MS, type WindowState } from './rate-limit.js';

/**
 * Leases are divided from this share of the limit so that the unspent ones hold back less than
 * twice it between them (RateLimitsRepository.lease): under 10%.
 */
const LEASE_POOL_SHARE = 0.05;
/**
 * Once the database says a key's window is spent, this node asks again at most this often (rather
 * than on every refused request): quota a closing node gave back is found within that time.
 */
const RECHECK_MS = 1000;

/** This node's view of one key's current window. */
interface Share {
  /** The window this node last leased in (its start, ISO), as the database named it. */
  windowStart: string | null;
  /** When that window ends: from then the share is void. */
  endsMs: number;
  /** Leased and not yet spent. */
  left: number;
  /** The rest of the limit no node had leased, as of this node's last lease. */
  unleased: number;
  /** Requests waiting on the lease in flight. */
  waiting: number;
  lease: Promise<void> | null;
  /** The window was spent at the last lease: refuse without asking until then. */
  recheckAtMs: number;
}

/** One request spent from the share's lease (it has some left, in a window still running). */
function spend(share: Share, nowMs: number): WindowState {
  share.left -= 1;
  return { remaining: share.left + share.unleased, resetSeconds: secondsUntil(share.endsMs, nowMs), limited: false };
}

export class KeyQuota {
  /** In the order of their windows' starts (a share that leases into a new window moves to the end). */
  readonly #shares = new InsertionOrderedMap<Share>();
  #leaseStatements = 0;

  constructor(
    private readonly repository: RateLimitsRepository,
    private readonly clock: Clock,
    readonly limit: number,
  ) {}

  /** Lease statements this node has run: a figure for tests and benchmarks. */
  get leaseStatements(): number {
    return this.#leaseStatements;
  }

  /** Spends one request of `keyId`'s quota at `now`, or says it is spent. */
  async take(keyId: string, now: Date): Promise<WindowState> {
    const nowMs = now.getTime();
    this.#forgetOneEnded(keyId, nowMs);
    let share = this.#shares.get(keyId);
    if (!share) {
      share = { windowStart: null, endsMs: 0, left: 0, unleased: 0, waiting: 0, lease: null, recheckAtMs: 0 };
      this.#shares.set(keyId, share);
    }
    for (;;) {
      if (nowMs >= share.endsMs) {
        share.left = 0;
        share.recheckAtMs = 0;
      }
      if (share.left > 0) return spend(share, nowMs);
      if (nowMs < share.recheckAtMs) return { remaining: 0, resetSeconds: secondsUntil(share.endsMs, nowMs), limited: true };
      const current = share;
      share.lease ??= this.#lease(keyId, share, now).finally(() => {
        current.lease = null;
      });
      share.waiting += 1;
      try {
        await share.lease;
      } finally {
        share.waiting -= 1;
      }
    }
  }

  /**
   * Spends one request of `keyId`'s quota at `now` from this node's lease, synchronously; null where
   * that needs a lease statement or the answer is a refusal (take then does it). The same steps as
   * take's first turn, so the count is the same either way.
   */
  takeFromMemory(keyId: string, now: Date): WindowState | null {
    const nowMs = now.getTime();
    const share = this.#shares.get(keyId);
    if (!share || nowMs >= share.endsMs || share.left === 0) return null;
    this.#forgetOneEnded(keyId, nowMs);
    return spend(share, nowMs);
  }

  /**
   * Gives back what this node leased and did not spend in windows still running, so other nodes can
   * use it. Called when the app closes; resolves to how many requests' worth went back.
   */
  async close(): Promise<number> {
    await Promise.allSettled([...this.#shares.entries()].map(([, share]) => share.lease));
    const nowMs = this.clock.now().getTime();
    let returned = 0;
    for (const [keyId, share] of this.#shares.entries()) {
      if (share.left === 0 || share.windowStart === null || nowMs >= share.endsMs) continue;
      const unused = share.left;
      share.left = 0;
      await this.repository.giveBack(keyId, share.windowStart, unused);
      returned += unused;
    }
    return returned;
  }

  async #lease(keyId: string, share: Share, now: Date): Promise<void> {
    this.#leaseStatements += 1;
    const lease = await this.repository.lease({
      keyId,
      now: now.toISOString(),
      endedIfStartedBy: new Date(now.getTime() - WINDOW_MS).toISOString(),
      knownWindow: share.windowStart,
      pool: Math.floor(this.limit * LEASE_POOL_SHARE),
      // The caller, and the requests that waited on the last lease and have not taken their turn yet:
      // asking for all of them spares a statement each, and strands nothing (each spends one at once).
      atLeast: share.waiting + 1,
      limit: this.limit,
    });
    if (lease.windowStart !== share.windowStart) {
      share.windowStart = lease.windowStart;
      share.endsMs = Date.parse(lease.windowStart) + WINDOW_MS;
      share.left = 0;
      this.#shares.set(keyId, share);
    }
    share.left += lease.grant;
    share.unleased = Math.max(0, this.limit - lease.granted);
    share.recheckAtMs = lease.grant === 0 ? now.getTime() + RECHECK_MS : 0;
  }

  /**
   * Drops the oldest share if its window is over and nothing waits on it (unless it is the key
   * asking): with one drop per request, the map holds about the keys used in the last minute, at a
   * constant cost per request.
   */
  #forgetOneEnded(asking: string, nowMs: number) {
    const oldest = this.#shares.oldest();
    if (!oldest || oldest[0] === asking) return;
    const [keyId, share] = oldest;
    if (nowMs >= share.endsMs && share.lease === null && share.waiting === 0) this.#shares.delete(keyId);
  }
}
