/**
 * The database's figures, read from the store when Prometheus scrapes (no query, no timer):
 * - both engines: transactions begun on this node and not yet ended. On SQLite every write goes
 *   through one connection, so a count that stays above 1 means writes are queueing;
 * - PostgreSQL: the pg pool's connections (open, idle), the queries waiting for one, and its maximum;
 * - SQLite: the write-ahead log's size. Its connections are fixed (one writer, one reader), so a pool
 *   gauge would say nothing; a WAL that keeps growing means checkpoints cannot finish.
 */
import { Gauge, type Registry } from 'prom-client';
import type { Store } from '../store/store.js';

export function registerDatabaseMetrics(registry: Registry, store: Pick<Store, 'engine' | 'connectionFigures'>): void {
  const registers = [registry];
  new Gauge({
    name: 'keyward_db_transactions_in_flight',
    help: 'Database transactions begun on this node and not yet ended.',
    registers,
    collect() {
      this.set(store.connectionFigures().transactionsUnderWay);
    },
  });
  if (store.engine === 'postgres') {
    new Gauge({
      name: 'keyward_db_pool_connections',
      help: 'PostgreSQL connections in the pool: open (total), idle, and the most it opens (max).',
      labelNames: ['state'],
      registers,
      collect() {
        const { pool } = store.connectionFigures();
        if (!pool) return;
        this.set({ state: 'total' }, pool.total);
        this.set({ state: 'idle' }, pool.idle);
        this.set({ state: 'max' }, pool.max);
      },
    });
    new Gauge({
      name: 'keyward_db_pool_waiting_queries',
      help: 'Queries waiting for a PostgreSQL connection from the pool.',
      registers,
      collect() {
        this.set(store.connectionFigures().pool?.waiting ?? 0);
      },
    });
  } else {
    new Gauge({
      name: 'keyward_sqlite_wal_bytes',
      help: "The SQLite database's write-ahead log, in bytes.",
      registers,
      collect() {
        this.set(store.connectionFigures().walBytes ?? 0);
      },
    });
  }
}
