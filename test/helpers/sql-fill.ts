/**
 * SQL fragments for filling a table with many rows in one statement, on either engine: the plan tests
 * need tens of thousands of rows, which one INSERT … SELECT over a series writes in well under a
 * second where one insert a row would take minutes.
 */
import { type RawBuilder, sql } from 'kysely';
import type { Engine } from '../../src/store/store.js';

/** The rows i = 1 … n, as a subquery's source (`from (${series}) as s`). */
export function numbersUpTo(engine: Engine, n: number): RawBuilder<unknown> {
  return engine === 'sqlite'
    ? sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${n}) select i from n`
    : sql`select i from generate_series(1, ${n}) as i`;
}

/** The time `seconds` (an SQL expression) after 2026-01-01, written as the application writes times (ISO 8601, milliseconds, Z). */
export function secondsAfter2026(engine: Engine, seconds: RawBuilder<unknown>): RawBuilder<string> {
  return engine === 'sqlite'
    ? sql<string>`strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || (${seconds}) || ' seconds')`
    : sql<string>`to_char(timestamp '2026-01-01' + (${seconds}) * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/** One zero byte, for a column of sealed bytes that nothing in the test opens. */
export function placeholderBytes(engine: Engine): RawBuilder<unknown> {
  return engine === 'sqlite' ? sql`x'00'` : sql`'\\x00'::bytea`;
}
