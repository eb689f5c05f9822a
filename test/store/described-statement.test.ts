/**
 * A named statement on PostgreSQL is described once per connection (store/described-statement.ts):
 * later runs there send no Describe, and their rows are parsed with the parsers learnt from the first.
 * The rows must be what pg's own Query gives for the same statement, on the first run and after; a
 * failure must be the statement's alone (the connection answers the next one); a write returns none.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresRunner } from '../../src/store/postgres-runner.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';

/** One column of each kind the store reads: text, integers (a bigint comes as text), a boolean, bytes, a time, JSON, a null. */
const TYPED = `select $1::text as word, 42::int as small, 9007199254740993::bigint as large, true as flag,
  decode($2, 'hex') as bytes, '2026-11-27T10:00:00.123Z'::timestamptz as at, '{"a":[1,2]}'::jsonb as doc,
  null::text as nothing from generate_series(1, 3) as n`;

describe('a named statement described once per connection', () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  /** The RowDescriptions the pool's one connection received. */
  const seen = { rowDescriptions: 0 };

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    // One connection, so that every run below is on the connection the first one described.
    pool = new pg.Pool({ connectionString: database.url, max: 1 });
    pool.on('connect', (client) => {
      (client as unknown as { connection: NodeJS.EventEmitter }).connection.on('rowDescription', () => {
        seen.rowDescriptions += 1;
      });
    });
    await pool.query('create table notes (id int primary key, body text not null)');
  });
  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  it("answers pg's own rows, on its first run and on every run after, describing it only on the first", async () => {
    const run = postgresRunner(pool);
    const values = ['héllo', 'c0ffee'];
    const expected = (await pool.query(TYPED, values)).rows;
    expect(expected[0]).toMatchObject({ word: 'héllo', small: 42, large: '9007199254740993', flag: true, nothing: null, doc: { a: [1, 2] } });
    expect(expected[0].bytes).toEqual(Buffer.from('c0ffee', 'hex'));
    expect(expected[0].at).toEqual(new Date('2026-11-27T10:00:00.123Z'));
    seen.rowDescriptions = 0;
    for (let i = 0; i < 4; i++) expect(await run(TYPED, values, 'kw_typed')).toEqual(expected);
    expect(seen.rowDescriptions).toBe(1);
  });

  it('runs a write that returns no rows, again and again, and answers none', async () => {
    const run = postgresRunner(pool);
    for (let id = 1; id <= 3; id++) expect(await run('insert into notes (id, body) values ($1, $2)', [id, `note ${id}`], 'kw_insert_note')).toEqual([]);
    expect((await pool.query('select count(*)::int as n from notes')).rows[0].n).toBe(3);
  });

  it("fails a statement alone, with PostgreSQL's error, and the connection answers the next run", async () => {
    const run = postgresRunner(pool);
    await expect(run('insert into notes (id, body) values ($1, $2)', [1, 'again'], 'kw_insert_note')).rejects.toMatchObject({ code: '23505' });
    await expect(run('select $1::int / 0 as never', [1], 'kw_divide')).rejects.toMatchObject({ code: '22012' });
    expect(await run('select body from notes where id = $1', [2], 'kw_note_body')).toEqual([{ body: 'note 2' }]);
    expect(await run(TYPED, ['after', '00'], 'kw_typed')).toHaveLength(3);
  });
});
