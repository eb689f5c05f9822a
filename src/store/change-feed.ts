/**
 * PostgreSQL's change mark (reads-until-change.ts), for several nodes on one database: what lets a
 * node answer a proxied call's read from memory and still refuse a credential revoked on another node
 * at the very next call.
 *
 * Each node that keeps reads listens on `keyward_changes`, which the triggers of migration 024 notify
 * in every commit that changes such a read, its bookkeeping aside (UNWATCHED_CREDENTIAL_COLUMNS: a
 * kept read's lastUsedAt, check and refresh lease may be stale, and nothing may act on them). A
 * notification moves the mark, so what was kept is read again. A notification arrives a moment after its commit, though, and a revocation is acknowledged to
 * its caller at once: so a change that closes a door (seenEverywhere below) is acknowledged only after
 * every node has seen it. Its writer, after the commit, draws a token and notifies it; each node, having
 * moved its mark for every notification before (PostgreSQL delivers them in commit order), writes the
 * token back as seen; the writer waits until no node with a live lease is behind it.
 *
 * A lease is what makes a node that cannot hear (its session lost, its process stopped) safe to
 * leave behind: a node keeps nothing while it holds no lease of its own, and measures its lease on
 * its own clock, from before it asked for it, a margin short of the lease the database records. A
 * writer waits at most until that recorded lease ends, by then the node has stopped answering from
 * memory. A node that hears again registers afresh, and forgets whatever it kept before.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { QueryRunner } from './connections.js';

const CHANNEL = 'keyward_changes';
/** The feed's session as pg_stat_activity names it, for an operator (and a test) to find it. */
export const FEED_APPLICATION_NAME = 'keyward change feed';
/** How long a lease lasts, as the database records it: the longest a revocation waits for a node that went silent. */
export const LEASE_MS = 3000;
/** A node renews its lease this often, so two renewals can fail before it lapses. */
const RENEW_EVERY_MS = 1000;
/** A node's own view of its lease ends this much before the database's (clocks read at different moments). */
const LEASE_MARGIN_MS = 500;
/** A lost session is opened again after this, doubled after each failure in a row up to the most. */
const LISTEN_AGAIN_AFTER_MS = 1000;
const LISTEN_AGAIN_AFTER_MOST_MS = 30_000;
/** How long closing waits for the node's row to be deleted (else its lease runs out by itself). */
const CLOSE_WAIT_MS = 1000;
/** A node's row whose lease ended this long ago is deleted by the next node that registers (its node is gone). */
const FORGET_NODES_AFTER = '1 hour';
/**
 * The statements below hold a lease only on the session that is listening: behind a pooler that hands
 * statements to other sessions, or after an UNLISTEN, a node would otherwise hold a lease it cannot
 * keep, and hear nothing.
 */
const WHILE_LISTENING = `exists (select from pg_listening_channels() channel where channel = '${CHANNEL}')`;

/**
 * One node's feed: its mark, and the session that listens and holds its lease. The session is opened
 * by the first call to `mark` (only a process that keeps reads, the service, ever makes one).
 */
export class ChangeFeed {
  readonly #nodeId = randomUUID();
  #mark = 0;
  /** Until when (performance.now()) this node may answer from memory: 0 while it holds no lease. */
  #leaseEndsAt = 0;
  /** The newest token this node has seen (and moved its mark for). */
  #seen = 0;
  #session: pg.Client | null = null;
  #renewal: NodeJS.Timeout | null = null;
  /** When the renewal under way was asked (performance.now()), or null. */
  #renewalAsked: number | null = null;
  #seenWriteAsked = false;
  #started = false;
  #closed = false;
  /** Sessions lost in a row without a registration between (the next one waits longer). */
  #failures = 0;

  constructor(private readonly connection: pg.ClientConfig) {}

  /** The change mark: moves with every change notified; while this node holds no lease, a new number at every call. */
  readonly mark = (): number => {
    if (!this.#started) {
      this.#started = true;
      void this.#listen();
    }
    if (performance.now() >= this.#leaseEndsAt) this.#mark += 1;
    return this.#mark;
  };

  async close(): Promise<void> {
    this.#closed = true;
    this.#leaseEndsAt = 0;
    if (this.#renewal) clearInterval(this.#renewal);
    const session = this.#session;
    this.#session = null;
    if (!session) return;
    // Gone from the table, writers stop waiting for this node at once instead of for its lease; a
    // session that does not answer is not waited for long (the lease then runs out by itself).
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      session.query('delete from caching_nodes where node_id = $1', [this.#nodeId]).catch(() => undefined),
      new Promise((resolve) => {
        timer = setTimeout(resolve, CLOSE_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
    await session.end().catch(() => undefined);
  }

  async #listen(): Promise<void> {
    if (this.#closed) return;
    // A statement unanswered within a lease ends the session (a network that drops packets would
    // otherwise hold a registration, and this node's keeping, until the kernel gives up).
    const session = new pg.Client({ ...this.connection, application_name: FEED_APPLICATION_NAME, query_timeout: LEASE_MS, keepAlive: true });
    session.on('error', () => this.#lost(session));
    session.on('end', () => this.#lost(session));
    session.on('notification', (message) => this.#heard(message.payload));
    this.#session = session;
    try {
      await session.connect();
      // Listening before registering: every token drawn after the registration's reading of the
      // sequence reaches this session, and every one drawn before it is counted as seen by it (its
      // change was committed before that reading, and this node reads afresh from then on). A sequence
      // not yet drawn from holds its first value unused (is_called false).
      await session.query(`listen ${CHANNEL}`);
      await session.query(`delete from caching_nodes where lease_until < now() - interval '${FORGET_NODES_AFTER}'`);
      if (this.#session !== session) return;
      const asked = performance.now();
      const registered = await session.query(
        `insert into caching_nodes (node_id, lease_until, seen_token)
         select $1, now() + make_interval(secs => $2), (select case when is_called then last_value else 0 end from change_tokens)
         where ${WHILE_LISTENING}
         on conflict (node_id) do update set lease_until = excluded.lease_until, seen_token = greatest(caching_nodes.seen_token, excluded.seen_token)`,
        [this.#nodeId, LEASE_MS / 1000],
      );
      if (this.#session !== session) return;
      if (registered.rowCount !== 1) throw new Error('the change feed registered on a session that does not listen');
      // Whatever was kept before this registration was kept unheard: forgotten.
      this.#failures = 0;
      this.#mark += 1;
      this.#leaseEndsAt = asked + LEASE_MS - LEASE_MARGIN_MS;
      this.#renewal = setInterval(() => this.#renewDue(session), RENEW_EVERY_MS).unref();
    } catch {
      this.#lost(session);
    }
  }

  /** One renewal at a time; one that has not been answered within a lease means the session is gone (a network that drops packets). */
  #renewDue(session: pg.Client): void {
    if (this.#renewalAsked === null) return void this.#renew(session);
    // Judged after this turn's sockets are read: after a stall of the event loop, timers run before
    // the answer that came meanwhile is read.
    const asked = this.#renewalAsked;
    setImmediate(() => {
      if (this.#renewalAsked === asked && performance.now() - asked > LEASE_MS) this.#lost(session);
    });
  }

  /** Renews the lease and writes the newest token seen (so a write of it that failed is made good). */
  async #renew(session: pg.Client): Promise<void> {
    const asked = performance.now();
    this.#renewalAsked = asked;
    try {
      const renewed = await session.query(
        `update caching_nodes set lease_until = now() + make_interval(secs => $2), seen_token = greatest(seen_token, $3)
         where node_id = $1 and ${WHILE_LISTENING}`,
        [this.#nodeId, LEASE_MS / 1000, this.#seen],
      );
      if (this.#session !== session) return;
      // The row gone (deleted by hand, a database restored) or the session no longer listening: no
      // writer waits for this node, so it must keep nothing. It registers afresh.
      if (renewed.rowCount !== 1) return this.#lost(session);
      // A lease that had run out (the process starved, paused) was not waited for by writers meanwhile:
      // what was kept before is forgotten, as at a registration.
      if (performance.now() >= this.#leaseEndsAt) this.#mark += 1;
      this.#leaseEndsAt = asked + LEASE_MS - LEASE_MARGIN_MS;
    } catch {
      this.#lost(session);
    } finally {
      if (this.#session === session) this.#renewalAsked = null;
    }
  }

  #heard(payload: string | undefined): void {
    this.#mark += 1;
    const token = Number(payload);
    if (!payload || !(token > this.#seen)) return;
    this.#seen = token;
    // The tokens heard in one turn are written back as one.
    if (this.#seenWriteAsked) return;
    this.#seenWriteAsked = true;
    setImmediate(() => {
      this.#seenWriteAsked = false;
      const session = this.#session;
      session
        ?.query('update caching_nodes set seen_token = greatest(seen_token, $2) where node_id = $1', [this.#nodeId, this.#seen])
        .catch(() => this.#lost(session));
    });
  }

  /** The session is gone or failed: nothing kept is answered until a new one holds a lease. */
  #lost(session: pg.Client): void {
    if (this.#session !== session) return;
    this.#session = null;
    this.#leaseEndsAt = 0;
    this.#mark += 1;
    if (this.#renewal) clearInterval(this.#renewal);
    this.#renewal = null;
    this.#renewalAsked = null;
    session.end().catch(() => undefined);
    if (this.#closed) return;
    const wait = Math.min(LISTEN_AGAIN_AFTER_MS * 2 ** this.#failures, LISTEN_AGAIN_AFTER_MOST_MS);
    this.#failures += 1;
    setTimeout(() => void this.#listen(), wait).unref();
  }
}

/**
 * Returns once every node that keeps reads has seen every change committed before the call, or its
 * lease has ended (then it answers nothing from memory). The token is drawn after those commits, so a
 * node that has seen it has seen them. Any process may wait so, the CLI's included: it needs no feed
 * of its own.
 */
export async function untilSeenEverywhere(run: QueryRunner): Promise<void> {
  const [drawn] = (await run(`select t::text as token, pg_notify('${CHANNEL}', t::text) from (select nextval('change_tokens') as t) drawn`, [])) as {
    token: string;
  }[];
  // A node cannot stay behind longer than its lease: it holds one only on a session that listens
  // (WHILE_LISTENING), which hears every token. This bound is a last guard (a clock that jumps), past
  // which the change is answered as it would have been without a feed.
  const giveUpAt = performance.now() + 2 * LEASE_MS;
  for (let pause = 1; ; pause = Math.min(2 * pause, 50)) {
    const behind = await run('select 1 from caching_nodes where lease_until > now() and seen_token < $1 limit 1', [drawn!.token]);
    if (behind.length === 0 || performance.now() > giveUpAt) return;
    await sleep(pause);
  }
}
