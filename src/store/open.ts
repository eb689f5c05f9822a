/**
 * Opens the database named by KEYWARD_DATABASE_URL: an embedded SQLite file (the default) or a
 * PostgreSQL server. Both are driven through the same typed Kysely instance (see connections.ts).
 */
import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  Kysely,
  PostgresDialect,
  type SqliteDatabase,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
} from 'kysely';
import pg from 'pg';
import { ChangeFeed, untilSeenEverywhere } from './change-feed.js';
import { ClassifyingDialect } from './classifying-dialect.js';
import { type ChangeMark, type ChunkReader, Connections, type Engine, type QueryRunner, type UntilSeenEverywhere } from './connections.js';
import { postgresRunner } from './postgres-runner.js';
import type { Database } from './schema.js';
import { storeError } from './store-errors.js';

export interface DatabaseLocation {
  engine: Engine;
  /** The SQLite file path, or the PostgreSQL connection string. */
  target: string;
  /** PostgreSQL: the most connections the pool opens (POOL_MAX unless given); not used by SQLite. */
  poolMax?: number;
}

export function parseDatabaseUrl(url: string): DatabaseLocation | null {
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return { engine: 'postgres', target: url };
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    return path ? { engine: 'sqlite', target: path } : null;
  }
  return null;
}

/**
 * better-sqlite3 compiles a statement on every prepare(); Kysely prepares on every query. Reusing
 * compiled statements by SQL text takes that cost off every request (the set of distinct SQL texts
 * the service issues is small and fixed, so the cache stays small).
 */
function withStatementCache(database: BetterSqlite3.Database): SqliteDatabase {
  const statements = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => database.close(),
    prepare(sqlText: string) {
      let statement = statements.get(sqlText);
      if (!statement) {
        statement = database.prepare(sqlText);
        if (statements.size < 500) statements.set(sqlText, statement);
      }
      return statement;
    },
  };
}

/** How busy the connections are, read when metrics are scraped (metrics/database-metrics.ts). */
export interface ConnectionFigures {
  /** Transactions begun on this node and not yet ended. */
  transactionsUnderWay: number;
  /** PostgreSQL's pool: connections open, idle, queries waiting for one, and the most it opens. */
  pool?: { total: number; idle: number; waiting: number; max: number };
  /** SQLite's write-ahead log in bytes: one that keeps growing means checkpoints cannot finish. */
  walBytes?: number;
}

interface Opened {
  db: Kysely<Database>;
  /** Where the per-request reads run (see Connections.reader). */
  readRunner: QueryRunner;
  /** Where a write-path statement that needs no transaction runs (see Connections.runAlone). */
  aloneRunner: QueryRunner;
  readInChunks: ChunkReader;
  changeMark: ChangeMark | null;
  untilSeenEverywhere: UntilSeenEverywhere | null;
  /** The engine's own figures (ConnectionFigures without the transactions, which Connections counts). */
  figures(): Omit<ConnectionFigures, 'transactionsUnderWay'>;
  close(): Promise<void>;
}

/**
 * Kysely begins SQLite transactions DEFERRED: the write lock is taken at the first write. When
 * another process (the CLI beside a running service) commits between a transaction's first read and
 * its first write, SQLite can only fail that transaction at once (SQLITE_BUSY, "database is locked");
 * busy_timeout cannot help. BEGIN IMMEDIATE takes the write lock first and waits its turn instead.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#config = config;
  }
  override createDriver() {
    return new ImmediateSqliteDriver(this.#config);
  }
}

/** A better-sqlite3 connection, its refusal to open classified as the store's (store-errors.ts). */
function openSqliteFile(path: string, options?: BetterSqlite3.Options): BetterSqlite3.Database {
  try {
    return new BetterSqlite3(path, options);
  } catch (error) {
    throw storeError(error);
  }
}

/** Rows of a ChunkReader's chunk: on PostgreSQL, the rows one round trip of the cursor fetches. */
const CHUNK_ROWS = 200;

const rethrowStoreError = (error: unknown): never => {
  throw storeError(error);
};

/** `rows`, with an error of the database's while they are read classified as the store's. */
function* classified<T>(rows: Iterable<T>): Generator<T> {
  try {
    yield* rows;
  } catch (error) {
    throw storeError(error);
  }
}

function openSqlite(path: string): Opened {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const database = openSqliteFile(path);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  // Another process (the CLI) may hold the write lock for a moment.
  database.pragma('busy_timeout = 5000');
  // Erased secrets are overwritten on disk, not left in free pages.
  database.pragma('secure_delete = ON');
  const db = new Kysely<Database>({ dialect: new ClassifyingDialect(new ImmediateSqliteDialect({ database: withStatementCache(database) })) });

  // Kysely runs everything on the one connection above, one query or transaction at a time. In WAL
  // mode a second, read-only connection reads the last committed state while a write is under way;
  // its statements run synchronously, without Kysely's queue.
  const reader = openSqliteFile(path, { readonly: true });
  reader.pragma('busy_timeout = 5000');
  const readStatements = withStatementCache(reader);
  const readRunner: QueryRunner = async (sqlText, parameters) => {
    try {
      return readStatements.prepare(sqlText).all(parameters) as unknown[];
    } catch (error) {
      throw storeError(error);
    }
  };
  const dataVersion = reader.prepare('pragma data_version').pluck();
  const changeMark: ChangeMark = () => {
    try {
      return dataVersion.get() as number;
    } catch (error) {
      throw storeError(error);
    }
  };
  const aloneRunner: QueryRunner = async (sqlText, parameters) => (await db.executeQuery(CompiledQuery.raw(sqlText, [...parameters]))).rows;
  const readInChunks: ChunkReader = async function* (sqlText, parameters) {
    // A connection of its own: a statement being iterated keeps its connection busy until it ends.
    const connection = openSqliteFile(path, { readonly: true });
    let rows: Iterator<unknown> | undefined;
    try {
      connection.pragma('busy_timeout = 5000');
      rows = connection.prepare(sqlText).iterate(parameters)[Symbol.iterator]();
      let more = true;
      const chunk = function* (iterator: Iterator<unknown>) {
        for (let n = 0; n < CHUNK_ROWS; n++) {
          const next = iterator.next();
          if (next.done) {
            more = false;
            return;
          }
          yield next.value;
        }
      };
      while (more) yield classified(chunk(rows));
    } catch (error) {
      throw storeError(error);
    } finally {
      // A reader that stopped early leaves the statement mid-way: end it before closing its connection.
      rows?.return?.();
      connection.close();
    }
  };
  return {
    db,
    readRunner,
    aloneRunner,
    readInChunks,
    changeMark,
    untilSeenEverywhere: null,
    figures: () => ({ walBytes: walBytes(path) }),
    close: async () => {
      reader.close();
      await db.destroy();
    },
  };
}

/** The -wal file's size; none (checkpointed away, or not made yet) is 0. */
function walBytes(path: string): number {
  try {
    return statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
}

const POOL_MAX = 10;

/**
 * How long a query may wait for a connection: to open one (a server that drops packets instead of
 * refusing would otherwise hold the request until the kernel gives up, minutes later) or to be handed
 * one by a pool whose every connection is stuck. Then it fails, and the request is answered 503
 * database_unavailable. A server that is stopped refuses at once, so that answer comes at once; a
 * healthy pool hands a connection over in milliseconds even under load, far inside this bound.
 */
const POSTGRES_CONNECT_TIMEOUT_MS = 5000;

function openPostgres(connectionString: string, max = POOL_MAX): Opened {
  const pool = new pg.Pool({ connectionString, max, connectionTimeoutMillis: POSTGRES_CONNECT_TIMEOUT_MS });
  const feed = new ChangeFeed({ connectionString, connectionTimeoutMillis: POSTGRES_CONNECT_TIMEOUT_MS });
  // A client that loses its connection must not take the process down. The pool listens on its idle
  // clients ('error' on the pool); a client handed out has no listener of its own (neither the pool
  // nor Kysely adds one), and a server that shuts down sends every session a FATAL 57P01, also to
  // one between the statements of a transaction: without this listener that is an unhandled 'error'
  // event and the process exits. The client is then unusable: its next query fails (a
  // DatabaseUnavailable) and the pool drops it on release.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<Database>({ dialect: new ClassifyingDialect(new PostgresDialect({ pool })) });
  const readRunner = postgresRunner(pool);
  const readInChunks: ChunkReader = async function* (sqlText, parameters) {
    // A cursor declared in SQL, not a protocol portal: PostgreSQL plans a DECLAREd cursor for its first
    // rows (the index's order), where a portal is planned for the whole result (a scan and a sort).
    const client = await pool.connect().catch(rethrowStoreError);
    let open = false;
    try {
      await client.query('begin read only');
      open = true;
      await client.query(`declare keyward_chunks no scroll cursor for ${sqlText}`, [...parameters]);
      for (;;) {
        const { rows } = await client.query(`fetch ${CHUNK_ROWS} from keyward_chunks`);
        if (rows.length === 0) break;
        yield rows;
      }
      await client.query('commit');
      open = false;
    } catch (error) {
      throw storeError(error);
    } finally {
      // Also when the reader stopped early (the generator's return): the cursor ends with its transaction.
      if (open) await client.query('rollback').catch(() => undefined);
      client.release();
    }
  };
  const figures = () => ({ pool: { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max } });
  return {
    db,
    readRunner,
    aloneRunner: readRunner,
    readInChunks,
    changeMark: feed.mark,
    untilSeenEverywhere: () => untilSeenEverywhere(readRunner),
    figures,
    close: async () => {
      await feed.close();
      await db.destroy();
    },
  };
}

/** Opens the database; `close` ends every connection. */
export function openConnections(location: DatabaseLocation): { connections: Connections; figures(): ConnectionFigures; close(): Promise<void> } {
  const { db, readRunner, aloneRunner, readInChunks, changeMark, untilSeenEverywhere, figures, close } =
    location.engine === 'postgres' ? openPostgres(location.target, location.poolMax) : openSqlite(location.target);
  const connections = new Connections(location.engine, db, readRunner, aloneRunner, readInChunks, changeMark, untilSeenEverywhere);
  return { connections, figures: () => ({ ...figures(), transactionsUnderWay: connections.transactionsUnderWay }), close };
}
