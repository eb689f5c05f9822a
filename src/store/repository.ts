import type { Connections, Db } from './connections.js';

/** What every repository shares: the statement runs on the open transaction of the call chain, or the root connection. */
export abstract class Repository {
  constructor(protected readonly connections: Connections) {}

  protected get db(): Db {
    return this.connections.current;
  }
}
