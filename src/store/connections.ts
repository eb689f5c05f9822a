/**
 * Where a repository's statement runs. Every repository method asks `current`: inside
 * `transaction(fn)` that is the open transaction (carried by AsyncLocalStorage through every await of
 * fn), elsewhere the root connection. So a nested call cannot reach past an open transaction to the
 * root connection, which on SQLite (one connection, one statement at a time) would wait forever
 * behind the very transaction that waits for it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

export type Engine = 'sqlite' | 'postgres';

/** A query runner: the root connection, or a transaction already open. */
export type Db = Kysely<Database> | Transaction<Database>;

/**
 * Runs one SQL text with its parameters and gives back the rows (the prepared per-request reads, and
 * the write path's statements that run alone).
 * With a name (prepared.ts gives one, unique to the text), PostgreSQL runs it as a named prepared
 * statement (postgres-runner.ts); SQLite keeps its compiled statements by text and needs none.
 */
export type QueryRunner = (sqlText: string, parameters: readonly unknown[], name?: string) => Promise<unknown[]>;

/**
 * One statement's rows as a stream of chunks, for a reader of a whole table (audit export), on a
 * connection of its own and from one snapshot. On SQLite a chunk's rows are made as they are read, so
 * one row is held at a time; on PostgreSQL a chunk is one FETCH of a cursor. Memory stays what one
 * chunk takes, however many rows the statement has.
 */
export type ChunkReader = (sqlText: string, parameters: readonly unknown[]) => AsyncIterable<Iterable<unknown>>;

/**
 * A number that moves whenever a connection other than the reader, in this process or another,
 * commits to the database: SQLite's `PRAGMA data_version` on the read-only reader; on PostgreSQL the
 * node's change feed (change-feed.ts), which moves with every commit that changes a kept read beyond
 * a credential's bookkeeping (its lastUsedAt, check and refresh lease).
 * Synchronous.
 */
export type ChangeMark = () => number;

/** Returns once every node has seen the changes committed before the call (change-feed.ts). */
export type UntilSeenEverywhere = () => Promise<void>;

export class Connections {
  readonly #open = new AsyncLocalStorage<Transaction<Database>>();
  /** Open transactions whose changes must be seen by every node before their commit is answered. */
  readonly #toBeSeenEverywhere = new WeakSet<Transaction<Database>>();
  /** Transactions under way on this node (see transaction()). */
  #underWay = 0;

  constructor(
    readonly engine: Engine,
    /** The root connection (pool on PostgreSQL). Only store/ sees it. */
    readonly root: Kysely<Database>,
    /**
     * Where the per-request reads run outside a transaction: on SQLite a read-only connection of its
     * own (WAL), so they never queue behind a write; on PostgreSQL the pool.
     */
    readonly reader: QueryRunner,
    /** runAlone's runner: on SQLite the root connection (in Kysely's queue), on PostgreSQL the pool as `reader`. */
    private readonly alone: QueryRunner,
    /** A whole statement's rows, chunk by chunk (see ChunkReader). */
    readonly readInChunks: ChunkReader,
    /** The change mark (reads-until-change.ts); null where nothing is kept (see ChangeMark). */
    readonly changeMark: ChangeMark | null,
    /** PostgreSQL's wait for every node (change-feed.ts); null on SQLite, where every process reads the one file. */
    private readonly untilSeenEverywhere: UntilSeenEverywhere | null,
  ) {}

  /**
   * For a change that closes a door (a revocation): returns once every node will see it at its next
   * request, however it kept its reads. Inside a transaction the wait comes after its commit, before
   * transaction() returns. On SQLite at once: the next read of any process sees every commit.
   */
  async seenEverywhere(): Promise<void> {
    if (this.untilSeenEverywhere === null) return;
    const open = this.#open.getStore();
    if (open) this.#toBeSeenEverywhere.add(open);
    else await this.untilSeenEverywhere();
  }

  /**
   * One statement of the write path that needs no transaction around it (a single statement is atomic
   * on both engines): on PostgreSQL named and on the pool, as the reads go; on SQLite on the one
   * writing connection. Never inside transaction(): on SQLite it would queue behind the very
   * transaction that waits for it, and on PostgreSQL it would run outside it.
   */
  runAlone(sqlText: string, parameters: readonly unknown[], name?: string): Promise<unknown[]> {
    if (this.inTransaction) return Promise.reject(new Error('runAlone was called inside a transaction'));
    return this.alone(sqlText, parameters, name);
  }

  /** The open transaction of this call chain, or the root connection. */
  get current(): Db {
    return this.#open.getStore() ?? this.root;
  }

  get inTransaction(): boolean {
    return this.#open.getStore() !== undefined;
  }

  /** Transactions begun on this node and not yet ended (on SQLite, those queued for the one connection too). */
  get transactionsUnderWay(): number {
    return this.#underWay;
  }

  /**
   * Runs fn in one transaction; every repository call inside it, however deeply nested, runs on it.
   * Called inside a transaction already open, fn joins it (one commit, one rollback).
   */
  transaction<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#open.getStore()) return fn();
    this.#underWay += 1;
    let opened: Transaction<Database> | undefined;
    return this.root
      .transaction()
      .execute((trx) => {
        opened = trx;
        return this.#open.run(trx, fn);
      })
      .then(async (result) => {
        if (opened && this.#toBeSeenEverywhere.has(opened)) await this.untilSeenEverywhere!();
        return result;
      })
      .finally(() => {
        // On Node 20 a live AsyncLocalStorage hooks every promise the process makes (about 0.1 µs each,
        // a few µs a request, measured). With no transaction under way nothing needs the store:
        // disabling it turns the hooks off until the next run() turns them on again.
        this.#underWay -= 1;
        if (this.#underWay === 0) this.#open.disable();
      });
  }
}
