/**
 * A named statement on PostgreSQL is described once per connection (store/described-statement.ts):
 * later runs there send no Describe, and their rows are parsed with the parsers learnt from the first.
 * The rows must be what pg's own Query gives for the same statement, on the first run and after; a
 * failure must be the statement's alone (the same connection answers the next run, still without a
 * Describe); a value pg cannot send is an error, not a crash; a write returns none; and the rows of a
 * statement that is no longer what the connection described are refused, not misread.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DescribedStatement, type RowsCallback } from '../../src/store/described-statement.js';
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

  it("fails a statement alone, with PostgreSQL's error: the same connection answers the next run, still undescribed", async () => {
    // One client held, so that every run is on one connection (the pool would close a client that failed).
    const client = await pool.connect();
    const on = (statement: DescribedStatement) =>
      new Promise<Record<string, unknown>[]>((resolve, reject) => {
        const callback: RowsCallback = (error, result) => (error ? reject(error) : resolve(result!.rows));
        (client.query as unknown as (s: DescribedStatement, c: RowsCallback) => void).call(client, statement, callback);
      });
    try {
      const body = () => new DescribedStatement('kw_held_note_body', 'select body from notes where id = $1', [2]);
      expect(await on(body())).toEqual([{ body: 'note 2' }]);
      seen.rowDescriptions = 0;
      await expect(on(new DescribedStatement('kw_held_insert', 'insert into notes (id, body) values ($1, $2)', [1, 'again']))).rejects.toMatchObject({
        code: '23505',
      });
      await expect(on(new DescribedStatement('kw_held_divide', 'select $1::int / 0 as never', [1]))).rejects.toMatchObject({ code: '22012' });
      // A value pg cannot send (JSON cannot hold a cycle) is the run's error; nothing was sent.
      const cycle: Record<string, unknown> = {};
      cycle.self = cycle;
      await expect(on(new DescribedStatement('kw_held_cycle', 'select $1::jsonb as doc', [cycle]))).rejects.toThrow(/circular/i);
      expect(await on(body())).toEqual([{ body: 'note 2' }]);
      // The note's read was not described again (and the failed runs failed before a description came back).
      expect(seen.rowDescriptions).toBe(0);
      // Bytes go as a parameter and come back as bytes.
      expect(await on(new DescribedStatement('kw_held_bytes', 'select $1::bytea as bytes', [Buffer.from([0, 255, 7])]))).toEqual([
        { bytes: Buffer.from([0, 255, 7]) },
      ]);
    } finally {
      client.release();
    }
  });

  it('refuses the rows of a statement the session changed under the same name, and answers the next run on a fresh connection', async () => {
    const run = postgresRunner(pool);
    const text = "select $1::text as word, 'two' as second";
    expect(await run(text, ['first'], 'kw_swapped')).toEqual([{ word: 'first', second: 'two' }]);
    // Someone else's statement under the name on that session (the pool's one connection), with three columns.
    await pool.query("deallocate kw_swapped; prepare kw_swapped(text) as select $1 as a, 'b' as b, 'c' as c");
    // Not misread, and not sent again (it ran: it might have been a write).
    await expect(run(text, ['again'], 'kw_swapped')).rejects.toThrow('statement kw_swapped answered 3 columns, not the 2 it was described with');
    // The pool closed that connection; the next one parses and describes the statement afresh.
    expect(await run(text, ['then'], 'kw_swapped')).toEqual([{ word: 'then', second: 'two' }]);
  });
});
