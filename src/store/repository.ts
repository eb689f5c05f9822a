import type { Connections, Db } from './connections.js';

/** What every repository shares: the statement runs on the open transaction of the call chain, or the root connection. */
export abstract class Repository {
  constructor(protected readonly connections: Connections) {}

  protected get db(): Db {
    return this.connections.current;
  }

  /**
   * `query` with a row lock on PostgreSQL (FOR UPDATE, FOR KEY SHARE, SKIP LOCKED…). SQLite takes no
   * row locks, and needs none: it has one writer, so a write transaction there is already alone.
   */
  protected lockedOnPostgres<Q>(query: Q, lock: (query: Q) => Q): Q {
    return this.connections.engine === 'postgres' ? lock(query) : query;
  }
}
