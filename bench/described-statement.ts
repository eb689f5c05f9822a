/**
 * The client's CPU per named statement on PostgreSQL: pg's own Query, which copies its config and
 * has the portal described on every run, against the store's runner (src/store/postgres-runner.ts),
 * which describes a statement once per connection and then sends Bind, Execute and Sync only
 * (src/store/described-statement.ts). Each runs the same statement of 28 columns (text, integers,
 * nulls, a time as text, as the proxied call's and the member read's statements are), returning one
 * row and four, 8 at a time on a pool of 4 connections, in interleaved rounds; the process's own CPU
 * (process.cpuUsage) over the statements, so the database's backend does not count.
 *
 *   npm run bench:statements                       # 6 rounds of 4,000 statements each
 *   BENCH_ROUNDS=10 BENCH_STATEMENTS=8000 npm run bench:statements
 */
import pg from 'pg';
import { postgresRunner } from '../src/store/postgres-runner.js';
import { benchPostgres } from './processes.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const STATEMENTS = Number(process.env.BENCH_STATEMENTS ?? 4000);
const AT_ONCE = 8;

const KINDS = [(i: number) => `$1::text || '${i}'`, (i: number) => `${i}::int`, () => 'null::text', () => `'2026-11-27T10:00:00.000Z'`];
const COLUMNS = Array.from({ length: 28 }, (_, i) => `${KINDS[i % KINDS.length]!(i)} as c${i}`).join(', ');
const SHAPES: Record<string, string> = {
  'one row': `select ${COLUMNS}`,
  'four rows': `select ${COLUMNS} from generate_series(1, 4)`,
};

/** The process's CPU per statement, in µs, over STATEMENTS runs of `run`, AT_ONCE at a time. */
async function cpuPerStatement(run: () => Promise<unknown>): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < STATEMENTS; i += AT_ONCE) await Promise.all(Array.from({ length: AT_ONCE }, run));
  const used = process.cpuUsage(start);
  return (used.user + used.system) / STATEMENTS;
}

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
const listed = (values: number[]) => values.map((value) => value.toFixed(0)).join(', ');

const postgres = await benchPostgres();
const pool = new pg.Pool({ connectionString: await postgres.database(), max: 4 });
try {
  const runner = postgresRunner(pool);
  console.log(`${ROUNDS} interleaved rounds of ${STATEMENTS} statements, ${AT_ONCE} at a time, Node ${process.version}`);
  for (const [shape, text] of Object.entries(SHAPES)) {
    const name = `bench_${shape.replace(' ', '_')}`;
    const ours = await runner(text, ['x'], `${name}_described`);
    const theirs = (await pool.query({ name: `${name}_query`, text, values: ['x'] })).rows;
    if (JSON.stringify(ours) !== JSON.stringify(theirs)) throw new Error(`the rows differ for ${shape}`);
    const query: number[] = [];
    const described: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      query.push(await cpuPerStatement(() => pool.query({ name: `${name}_query`, text, values: ['x'] })));
      described.push(await cpuPerStatement(() => runner(text, ['x'], `${name}_described`)));
    }
    console.log(
      `${shape}: pg's Query ${mean(query).toFixed(1)} µs CPU a statement (${listed(query)}), described once ${mean(described).toFixed(1)} (${listed(described)}): ${(mean(described) / mean(query)).toFixed(2)}×`,
    );
  }
} finally {
  await pool.end();
  await postgres.stop();
}
