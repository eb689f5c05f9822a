/**
 * The admitted rate of one account key against its limit with 1, 2 and 3 nodes on one PostgreSQL, in
 * one run: for each limit, three `keyward serve` processes on the same database; for each node count
 * a fresh key gets twice its limit in requests (GET /v1/end-users), spread evenly over that many of
 * the nodes and sent at once, all within one window of the key. Prints what was admitted against the
 * limit (CONTRACT 2.2: never more, at most 10% fewer) and the lease statements the nodes made for it.
 *
 * The key's first window is the dearest in statements: the nodes are new to the key, so their leases
 * are small. BENCH_WINDOWS=2 measures the next window too (waiting for it: about a minute each),
 * where the nodes are known from the last one and lease more at a time.
 *
 *   npm run bench:rate-limit                          # an embedded PostgreSQL, as the tests start one
 *   BENCH_DATABASE_URL=postgres://… npm run bench:rate-limit   # an admin URL: a database is made in it
 *   BENCH_LIMITS=30,600,6000 BENCH_CONNECTIONS=10 BENCH_WINDOWS=1 npm run bench:rate-limit
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { loadConfig } from '../src/config.js';
import { openContext } from '../src/runtime.js';
import { CLI_ACTOR, type ServiceContext } from '../src/services/context.js';
import { createAccountKey } from '../src/services/keys/account-keys.js';
import { createServer } from '../src/services/servers/servers.js';
import { createAccount } from '../src/services/users/accounts.js';
import { benchPostgres, type Started, startProcess } from './processes.js';

const LIMITS = (process.env.BENCH_LIMITS ?? '30,600,6000').split(',').map(Number);
const NODE_COUNTS = [1, 2, 3];
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const WINDOWS = Number(process.env.BENCH_WINDOWS ?? 1);
/** A measurement must end inside the key's first window, or it would count two windows' quota. */
const WINDOW_SECONDS = 60;

/** Sends `count` requests with `headers`, spread evenly over `nodes`, all at once; counts the answers by status. */
async function spread(nodes: Started[], headers: Record<string, string>, count: number) {
  const runs = await Promise.all(
    nodes.map((node, i) => {
      const amount = Math.floor(count / nodes.length) + (i < count % nodes.length ? 1 : 0);
      return autocannon({ url: `${node.address}/v1/end-users`, headers, connections: Math.min(CONNECTIONS, amount), amount });
    }),
  );
  const statuses: Record<string, number> = {};
  for (const run of runs) {
    if (run.errors > 0) throw new Error(`${run.errors} connection errors`);
    for (const [status, { count = 0 }] of Object.entries(run.statusCodeStats ?? {})) statuses[status] = (statuses[status] ?? 0) + count;
  }
  const unexpected = Object.keys(statuses).filter((status) => status !== '200' && status !== '429');
  if (unexpected.length) throw new Error(`unexpected answers: ${JSON.stringify(statuses)}`);
  return { admitted: statuses['200'] ?? 0, refused: statuses['429'] ?? 0 };
}

async function newKey(ctx: ServiceContext, accountId: string) {
  return createAccountKey(ctx, { accountId, label: `bench ${randomBytes(3).toString('hex')}`, actor: CLI_ACTOR });
}

const postgres = await benchPostgres();
const dir = mkdtempSync(join(tmpdir(), 'keyward-bench-rate-'));
const env = { KEYWARD_DATABASE_URL: await postgres.database(), KEYWARD_MASTER_KEY: randomBytes(32).toString('base64'), KEYWARD_LOG_LEVEL: 'warn' };
const { ctx } = await openContext(loadConfig(env));
const { accountId } = await createAccount(ctx, { name: 'Bench', email: 'bench@example.test' });
const { serverKey } = await createServer(ctx, { accountId, name: 'bench', mode: 'business', actor: CLI_ACTOR });

const rows: string[][] = [];
try {
  for (const limit of LIMITS) {
    const nodeEnv = { ...env, KEYWARD_RATE_LIMIT_PER_MINUTE: String(limit) };
    const nodes = await Promise.all([0, 1, 2].map((i) => startProcess(['bin/keyward.js', 'serve'], nodeEnv, join(dir, `node-${limit}-${i}.log`), '/healthz')));
    try {
      for (const count of NODE_COUNTS) {
        const { keyId, key } = await newKey(ctx, accountId);
        const windowOf = () => ctx.store.db.selectFrom('rate_limit_windows').selectAll().where('key_id', '=', keyId).executeTakeFirstOrThrow();
        for (let windowNumber = 1; windowNumber <= WINDOWS; windowNumber += 1) {
          if (windowNumber > 1) {
            // The key's window ends a minute after its first request; the next burst opens the next one.
            const ends = Date.parse((await windowOf()).window_start) + WINDOW_SECONDS * 1000;
            await new Promise((resolve) => setTimeout(resolve, Math.max(0, ends - Date.now()) + 500));
          }
          const sent = 2 * limit;
          const started = performance.now();
          const { admitted } = await spread(nodes.slice(0, count), { authorization: `Bearer ${key}`, 'x-service-key': serverKey }, sent);
          const seconds = (performance.now() - started) / 1000;
          if (seconds >= WINDOW_SECONDS - 5) throw new Error(`limit ${limit}, ${count} nodes: ${seconds.toFixed(0)} s is too close to the window's end`);
          const window = await windowOf();
          rows.push([
            String(limit),
            String(count),
            String(windowNumber),
            String(sent),
            String(admitted),
            `${((admitted / limit) * 100).toFixed(1)}%`,
            String(window.leases),
            seconds.toFixed(1),
          ]);
          console.error(`limit ${limit}, ${count} node(s), window ${windowNumber}: ${admitted} of ${sent} admitted, ${window.leases} lease statements`);
        }
      }
    } finally {
      await Promise.all(nodes.map((node) => node.stop()));
    }
  }
} finally {
  await ctx.store.close();
  await ctx.outbound.close();
  await postgres.stop();
  rmSync(dir, { recursive: true, force: true });
}

const header = ['limit/min', 'nodes', 'window', 'sent', 'admitted', 'admitted/limit', 'lease statements', 'seconds'];
const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]!.length)));
const line = (cells: string[]) => cells.map((cell, i) => cell.padStart(widths[i]!)).join('  ');
console.log(
  `\nOne key, twice its limit sent at once over 1–3 keyward serve processes on one PostgreSQL (${CONNECTIONS} connections a node), Node ${process.version}`,
);
console.log(line(header));
for (const row of rows) console.log(line(row));
