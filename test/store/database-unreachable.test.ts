/**
 * Which errors mean "the database cannot be reached" (store/store-errors.ts), read from real drivers: the
 * store throws DatabaseUnavailable for a PostgreSQL server that refuses the connection or ends the
 * session (57P01, as a fast shutdown does), and for an SQLite file another process holds locked past
 * the busy timeout or that cannot be opened; every other database error leaves the store as the
 * driver threw it (a unique violation, a missing table: a fault of ours, answered 500).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/store/migrate.js';
import { openStore, parseDatabaseUrl, type Store } from '../../src/store/store.js';
import { DatabaseUnavailable, isUniqueViolation } from '../../src/store/store-errors.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { freePort } from '../helpers/embedded-postgres.js';

async function thrown(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('PostgreSQL errors the store calls unreachable', () => {
  let database: TestDatabase;
  let store: Store;
  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    store = openStore(parseDatabaseUrl(database.url)!);
    await migrateToLatest(store);
  });
  afterAll(async () => {
    await store.close();
    await database.drop();
  });

  it('a server that refuses the connection: DatabaseUnavailable (ECONNREFUSED) at once, naming no host, port or password', async () => {
    const port = await freePort();
    const nowhere = openStore(parseDatabaseUrl(`postgres://keyward:s3cret-pw@127.0.0.1:${port}/keyward`)!);
    try {
      const startedAt = Date.now();
      const error = await thrown(nowhere.maintenance.ping());
      expect(Date.now() - startedAt).toBeLessThan(1000);
      expect(error).toBeInstanceOf(DatabaseUnavailable);
      expect((error as DatabaseUnavailable).reason).toBe('ECONNREFUSED');
      expect((error as Error).message).toBe('the database cannot be reached (ECONNREFUSED)');
      expect((error as Error).message).not.toMatch(new RegExp(`${port}|s3cret|127\\.0\\.0\\.1`));
    } finally {
      await nowhere.close();
    }
  });

  it('a session the server ends (57P01, as a fast shutdown does) mid-query: DatabaseUnavailable; the pool recovers', async () => {
    // Its rejection is awaited below; thrown() takes it at once, so it is never unhandled meanwhile.
    const sleeping = thrown(sql`SELECT pg_sleep(30) AS keyward_unreachable_probe`.execute(store.db));
    const admin = new pg.Client(database.url);
    await admin.connect();
    try {
      let ended = 0;
      for (let i = 0; i < 50 && ended === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        const { rows } = await admin.query(
          "SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE query LIKE '%keyward_unreachable_probe%' AND pid <> pg_backend_pid()",
        );
        ended = rows.length;
      }
      expect(ended).toBe(1);
    } finally {
      await admin.end();
    }
    const error = await sleeping;
    expect(error).toBeInstanceOf(DatabaseUnavailable);
    expect((error as DatabaseUnavailable).reason).toBe('57P01');
    // The pool drops the ended client once its socket closes; a call in that instant may still draw
    // it and fail the same way (DatabaseUnavailable, never anything else), and the next succeeds.
    let recovered = false;
    for (let i = 0; i < 20 && !recovered; i++) {
      const outcome = await store.maintenance.ping().then(
        () => null,
        (failure: unknown) => failure,
      );
      if (outcome === null) recovered = true;
      else expect(outcome).toBeInstanceOf(DatabaseUnavailable);
      if (!recovered) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(recovered).toBe(true);
  });

  it('leaves every other error as the driver threw it', async () => {
    await sql`CREATE TABLE unreachable_probe (id text PRIMARY KEY)`.execute(store.db);
    await sql`INSERT INTO unreachable_probe VALUES ('a')`.execute(store.db);
    const duplicate = await thrown(sql`INSERT INTO unreachable_probe VALUES ('a')`.execute(store.db));
    expect(duplicate).not.toBeInstanceOf(DatabaseUnavailable);
    expect(isUniqueViolation(duplicate)).toBe(true);
    const missing = await thrown(sql`SELECT * FROM no_such_table`.execute(store.db));
    expect(missing).not.toBeInstanceOf(DatabaseUnavailable);
    expect((missing as { code?: string }).code).toBe('42P01');
    const inTransaction = await thrown(store.transaction(() => sql`SELECT * FROM no_such_table`.execute(store.db).then(() => undefined)));
    expect(inTransaction).not.toBeInstanceOf(DatabaseUnavailable);
  });
});

describe('SQLite errors the store calls unreachable', () => {
  let dir: string;
  let store: Store;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keyward-unreachable-'));
    store = openStore(parseDatabaseUrl(`sqlite:${join(dir, 'keyward.db')}`)!);
    await migrateToLatest(store);
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a file another process holds locked past the busy timeout: DatabaseUnavailable (SQLITE_BUSY)', { timeout: 20_000 }, async () => {
    const other = new BetterSqlite3(join(dir, 'keyward.db'));
    other.exec('BEGIN IMMEDIATE');
    try {
      const error = await thrown(store.transaction(() => store.maintenance.ping()));
      expect(error).toBeInstanceOf(DatabaseUnavailable);
      expect((error as DatabaseUnavailable).reason).toBe('SQLITE_BUSY');
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    await expect(store.transaction(() => store.maintenance.ping())).resolves.toBeUndefined();
  });

  it('a file that cannot be opened: DatabaseUnavailable (SQLITE_CANTOPEN)', () => {
    // The path names a folder: SQLite cannot open it as a database file.
    let error: unknown;
    try {
      openStore(parseDatabaseUrl(`sqlite:${dir}`)!);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(DatabaseUnavailable);
    expect((error as DatabaseUnavailable).reason).toBe('SQLITE_CANTOPEN');
  });

  it('leaves every other error as the driver threw it', async () => {
    const missing = await thrown(sql`SELECT * FROM no_such_table`.execute(store.db));
    expect(missing).not.toBeInstanceOf(DatabaseUnavailable);
    expect((missing as { code?: string }).code).toBe('SQLITE_ERROR');
    await sql`CREATE TABLE unreachable_probe (id text PRIMARY KEY)`.execute(store.db);
    await sql`INSERT INTO unreachable_probe VALUES ('a')`.execute(store.db);
    const duplicate = await thrown(sql`INSERT INTO unreachable_probe VALUES ('a')`.execute(store.db));
    expect(duplicate).not.toBeInstanceOf(DatabaseUnavailable);
    expect(isUniqueViolation(duplicate)).toBe(true);
  });
});
