/**
 * The member read of GET /v1/end-users/{id} on PostgreSQL, named prepared statement against unnamed,
 * in interleaved rounds on one store: CPU of this process per read (what the socket bench counts
 * for Keyward) and wall time per read (which also holds PostgreSQL's parse and plan).
 *
 *   BENCH_READS=4000 BENCH_ROUNDS=7 npm exec -- tsx bench/named-statements.ts
 */
import pg from 'pg';
import { AudienceRepository } from '../src/store/audience-repository.js';
import { Connections, type QueryRunner } from '../src/store/connections.js';
import { migrateToLatest } from '../src/store/migrate.js';
import { postgresRunner } from '../src/store/postgres-runner.js';
import { openStore, parseDatabaseUrl } from '../src/store/store.js';
import { createPostgresDatabase, startEmbeddedPostgres } from '../test/helpers/embedded-postgres.js';

const READS = Number(process.env.BENCH_READS ?? 4000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);

const server = await startEmbeddedPostgres();
const { url, drop } = await createPostgresDatabase(server.adminUrl, 'keyward_named');
const store = openStore(parseDatabaseUrl(url)!);
await migrateToLatest(store);
const pool = new pg.Pool({ connectionString: url, max: 1 });
const reader = postgresRunner(pool);
let named = true;
const runner: QueryRunner = (text, values, name) => reader(text, values, named ? name : undefined);
const noChunks = (): never => {
  throw new Error('this bench reads no statement in chunks');
};
const audience = new AudienceRepository(new Connections('postgres', store.db, runner, runner, noChunks, null, null));

async function round(asNamed: boolean): Promise<{ cpu: number; wall: number }> {
  named = asNamed;
  await audience.memberWithCredentials('srv_bench', 'nobody');
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  for (let i = 0; i < READS; i++) await audience.memberWithCredentials('srv_bench', `user-${i}`);
  const wall = Number(process.hrtime.bigint() - start) / 1000 / READS;
  const used = process.cpuUsage(cpu);
  return { cpu: (used.user + used.system) / READS, wall };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const results = { named: [] as { cpu: number; wall: number }[], unnamed: [] as { cpu: number; wall: number }[] };
for (let r = 0; r < ROUNDS; r++) {
  for (const asNamed of r % 2 === 0 ? [true, false] : [false, true]) {
    const result = await round(asNamed);
    results[asNamed ? 'named' : 'unnamed'].push(result);
    console.log(`round ${r + 1} ${asNamed ? 'named  ' : 'unnamed'} ${result.cpu.toFixed(1)} µs CPU/read  ${result.wall.toFixed(1)} µs wall/read`);
  }
}
for (const [kind, rows] of Object.entries(results)) {
  console.log(`${kind}: median ${median(rows.map((x) => x.cpu)).toFixed(1)} µs CPU/read, ${median(rows.map((x) => x.wall)).toFixed(1)} µs wall/read`);
}
await pool.end();
await store.close();
await drop();
await server.stop();
