/**
 * A Kysely dialect around another, whose driver and connections let every error through
 * storeError (store-errors.ts): one that means the database cannot be reached leaves the store as
 * DatabaseUnavailable, whatever the engine and whichever query, transaction step or connection
 * checkout it came from; every other error leaves unchanged (a unique violation stays what
 * isUniqueViolation reads). Only what the database driver throws passes here, so a provider's
 * refused connection can never be taken for the database's.
 */
import type { CompiledQuery, DatabaseConnection, Dialect, Driver, Kysely, QueryCompiler, QueryResult, TransactionSettings } from 'kysely';
import { storeError } from './store-errors.js';

const rethrowClassified = (error: unknown): never => {
  throw storeError(error);
};

/**
 * Runs one driver call, its error classified. The call is made inside the try: a driver may throw
 * synchronously from a method that returns a promise (Kysely's SQLite connection runs better-sqlite3
 * synchronously), where a .catch() on the result would never be reached. Not an async function: this
 * runs for every query, and a catch handler on the driver's own promise costs less than another
 * async frame around it.
 */
function classified<T>(call: () => Promise<T>): Promise<T> {
  try {
    return call().catch(rethrowClassified);
  } catch (error) {
    return Promise.reject(storeError(error));
  }
}

class ClassifyingConnection implements DatabaseConnection {
  constructor(readonly inner: DatabaseConnection) {}

  executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    return classified(() => this.inner.executeQuery<R>(compiledQuery));
  }

  async *streamQuery<R>(compiledQuery: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    try {
      yield* this.inner.streamQuery<R>(compiledQuery, chunkSize);
    } catch (error) {
      throw storeError(error);
    }
  }
}

type Compile = QueryCompiler['compileQuery'];

class ClassifyingDriver implements Driver {
  /** One wrapper per connection of the inner driver (PostgreSQL's pool hands the same clients out again). */
  readonly #wrapped = new WeakMap<DatabaseConnection, ClassifyingConnection>();

  constructor(readonly inner: Driver) {}

  init(): Promise<void> {
    return classified(() => this.inner.init());
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await classified(() => this.inner.acquireConnection());
    let wrapped = this.#wrapped.get(connection);
    if (!wrapped) {
      wrapped = new ClassifyingConnection(connection);
      this.#wrapped.set(connection, wrapped);
    }
    return wrapped;
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return classified(() => this.inner.beginTransaction(innerOf(connection), settings));
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return classified(() => this.inner.commitTransaction(innerOf(connection)));
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return classified(() => this.inner.rollbackTransaction(innerOf(connection)));
  }

  savepoint(connection: DatabaseConnection, name: string, compile: Compile): Promise<void> {
    return classified(() => savepointStep(this.inner.savepoint, this.inner)(innerOf(connection), name, compile));
  }

  rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: Compile): Promise<void> {
    return classified(() => savepointStep(this.inner.rollbackToSavepoint, this.inner)(innerOf(connection), name, compile));
  }

  releaseSavepoint(connection: DatabaseConnection, name: string, compile: Compile): Promise<void> {
    return classified(() => savepointStep(this.inner.releaseSavepoint, this.inner)(innerOf(connection), name, compile));
  }

  // Releasing and destroying talk to the pool, not the server: their errors are faults as they are.
  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(innerOf(connection));
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

type SavepointStep = (connection: DatabaseConnection, name: string, compile: Compile) => Promise<void>;

/** The inner driver's savepoint step, bound to it; both engines' drivers have all three. */
function savepointStep(step: SavepointStep | undefined, driver: Driver): SavepointStep {
  if (!step) throw new Error('savepoints are not supported by this driver');
  return step.bind(driver);
}

function innerOf(connection: DatabaseConnection): DatabaseConnection {
  return connection instanceof ClassifyingConnection ? connection.inner : connection;
}

export class ClassifyingDialect implements Dialect {
  constructor(readonly inner: Dialect) {}

  createDriver(): Driver {
    return new ClassifyingDriver(this.inner.createDriver());
  }

  createQueryCompiler(): QueryCompiler {
    return this.inner.createQueryCompiler();
  }

  createAdapter() {
    return this.inner.createAdapter();
  }

  createIntrospector(db: Kysely<unknown>) {
    return this.inner.createIntrospector(db);
  }
}
