/**
 * 503 database_unavailable is for a database that cannot be reached, and for nothing else: a fault of
 * ours that reaches the database (here a table gone missing) is still 500 internal_error, logged as
 * one, on both engines; an SQLite file that another process holds locked past the busy timeout is
 * 503 with Retry-After. (PostgreSQL stopped and started under load: database-restart.test.ts.)
 */

import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/databases.js';
import { expectProblem } from '../helpers/problem-assertions.js';
import { startWithTenant, type TestApp } from '../helpers/test-app.js';

describe.each(ENGINES)('database errors on %s', (engine) => {
  let t: TestApp;
  let headers: Record<string, string>;
  beforeAll(async () => {
    ({ t, headers } = await startWithTenant(engine));
  });
  afterAll(() => t.close());

  const startForm = () => t.app.inject({ method: 'POST', url: '/v1/credentials/static/openai/connect', headers, payload: { externalUserId: 'u_1' } });

  it('a fault of ours is still 500 internal_error, logged as one, never 503', async () => {
    await sql`ALTER TABLE static_form_sessions RENAME TO static_form_sessions_away`.execute(t.ctx.store.db);
    try {
      const response = await startForm();
      expectProblem(response, 500, 'internal_error');
      expect(response.headers['retry-after']).toBeUndefined();
      expect(t.logs.some((line) => line.includes('"unhandled error"'))).toBe(true);
      expect(t.logs.some((line) => line.includes('"database unreachable"'))).toBe(false);
    } finally {
      await sql`ALTER TABLE static_form_sessions_away RENAME TO static_form_sessions`.execute(t.ctx.store.db);
    }
    expect((await startForm()).statusCode).toBe(201);
  });
});

// SQLite only: PostgreSQL has no file another process can hold (its outage is database-restart.test.ts).
describe('a locked SQLite file', () => {
  let t: TestApp;
  let headers: Record<string, string>;
  beforeAll(async () => {
    ({ t, headers } = await startWithTenant('sqlite'));
  });
  afterAll(() => t.close());

  const startForm = () => t.app.inject({ method: 'POST', url: '/v1/credentials/static/openai/connect', headers, payload: { externalUserId: 'u_1' } });

  it('a file another process holds locked past the busy timeout is 503 database_unavailable with Retry-After', { timeout: 20_000 }, async () => {
    const other = new BetterSqlite3(t.database.file!);
    other.exec('BEGIN IMMEDIATE');
    let response: Awaited<ReturnType<typeof startForm>>;
    try {
      response = await startForm();
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    const body = expectProblem(response, 503, 'database_unavailable');
    expect(body.title).toBe('Database unavailable');
    expect(response.headers['retry-after']).toBe('3');
    expect(body.detail).not.toMatch(/SQLITE|locked|keyward\.db/i);
    const line = t.logs.find((l) => l.includes('"database unreachable"'));
    expect(JSON.parse(line!)).toMatchObject({ level: 40, reason: 'SQLITE_BUSY' });
    expect(line).not.toContain(t.database.file!);
    expect((await startForm()).statusCode).toBe(201);
  });
});
