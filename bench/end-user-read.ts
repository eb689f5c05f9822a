/**
 * Loads GET /v1/end-users/{id} (both keys, a static credential decrypted per request) on Keyward, and
 * a bare Fastify route, one after the other in the same run on the same machine, and prints the
 * requests per second of each and their ratio: on SQLite against GET /hello, and on PostgreSQL
 * against GET /hello-db (one `SELECT 1` on the same PostgreSQL server). Keyward is loaded twice: as
 * configured by default (no metrics), and with KEYWARD_METRICS_PORT set, so one run shows what
 * counting every request costs.
 *
 *   npm run bench                          # both engines, default configuration (log level info)
 *   BENCH_SECONDS=20 BENCH_ENGINES=sqlite npm run bench
 *   BENCH_PROFILE_DIR=/tmp/profile npm run bench   # a V8 CPU profile of each Keyward process
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type autocannon from 'autocannon';
import { loadConfig } from '../src/config.js';
import { openContext } from '../src/runtime.js';
import { CLI_ACTOR } from '../src/services/context.js';
import { storeCredential } from '../src/services/credentials/credentials.js';
import { createAccountKey } from '../src/services/keys/account-keys.js';
import { enableProvider } from '../src/services/providers/server-providers.js';
import { createServer } from '../src/services/servers/servers.js';
import { createAccount } from '../src/services/users/accounts.js';
import type { Engine } from '../src/store/store.js';
import { freePort } from '../test/helpers/embedded-postgres.js';
import { benchPostgres, load, measure, peakRssMiB, startProcess } from './processes.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const LOG_LEVEL = process.env.KEYWARD_LOG_LEVEL ?? 'info';
const ENGINES = (process.env.BENCH_ENGINES ?? 'sqlite,postgres').split(',') as Engine[];
const MEMBER = 'auth0|bench-user';

async function seed(env: Record<string, string>) {
  const { ctx } = await openContext(loadConfig(env));
  const { accountId } = await createAccount(ctx, { name: 'Bench', email: 'bench@example.test' });
  const { serverId, serverKey } = await createServer(ctx, { accountId, name: 'bench', mode: 'business', actor: CLI_ACTOR });
  const { key } = await createAccountKey(ctx, { accountId, label: 'bench', actor: CLI_ACTOR });
  await enableProvider(ctx, { serverId, slug: 'openai', actor: CLI_ACTOR });
  const now = new Date().toISOString();
  await storeCredential(ctx, {
    accountId,
    serverId,
    externalUserId: MEMBER,
    provider: 'openai',
    secret: { type: 'static', values: { apiKey: `sk-bench-${randomBytes(16).toString('hex')}` } },
    actor: CLI_ACTOR,
    now,
  });
  await ctx.store.close();
  return { authorization: `Bearer ${key}`, 'x-service-key': serverKey };
}

const row = (name: string, { result: r, cpuMicros }: { result: autocannon.Result; cpuMicros: number }) =>
  `${name.padEnd(44)} ${r.requests.average.toFixed(0).padStart(7)} req/s   p50 ${String(r.latency.p50).padStart(3)} ms   p99 ${String(r.latency.p99).padStart(3)} ms   ${cpuMicros.toFixed(0).padStart(4)} µs CPU/request`;

type Measured = Awaited<ReturnType<typeof measure>>;

/** Two loads of one server as one row: the mean of their requests per second, latencies and CPU per request. */
function meanOf(a: Measured, b: Measured): Measured {
  const mean = (x: number, y: number) => (x + y) / 2;
  const result = {
    ...a.result,
    requests: { ...a.result.requests, average: mean(a.result.requests.average, b.result.requests.average) },
    latency: { ...a.result.latency, p50: mean(a.result.latency.p50, b.result.latency.p50), p99: mean(a.result.latency.p99, b.result.latency.p99) },
  };
  return { result, cpuMicros: mean(a.cpuMicros, b.cpuMicros) };
}

async function compare(engine: Engine, databaseUrl: string, dir: string) {
  const env = {
    KEYWARD_DATABASE_URL: databaseUrl,
    KEYWARD_MASTER_KEY: randomBytes(32).toString('base64'),
    KEYWARD_LOG_LEVEL: LOG_LEVEL,
    // The benchmark sends far more than the default 6,000 requests a minute on one key.
    KEYWARD_RATE_LIMIT_PER_MINUTE: '10000000',
  };
  const headers = await seed(env);
  const profile = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
  const keyward = await startProcess([...profile, 'bin/keyward.js', 'serve'], env, join(dir, `keyward-${engine}.log`), '/healthz');
  const metricsPort = await freePort();
  const counted = await startProcess(
    [...profile, 'bin/keyward.js', 'serve'],
    { ...env, KEYWARD_METRICS_PORT: String(metricsPort) },
    join(dir, `keyward-metrics-${engine}.log`),
    '/healthz',
  );
  const bareEnv: Record<string, string> = engine === 'postgres' ? { BARE_DATABASE_URL: databaseUrl } : {};
  const bare = await startProcess(['--import', 'tsx', 'bench/bare-server.ts'], bareEnv, join(dir, `bare-${engine}.log`), '/hello');
  const bareRoute = engine === 'postgres' ? '/hello-db' : '/hello';
  try {
    const path = `/v1/end-users/${encodeURIComponent(MEMBER)}`;
    const keywardUrl = `${keyward.address}${path}`;
    const countedUrl = `${counted.address}${path}`;
    for (const url of [keywardUrl, countedUrl]) {
      const check = await fetch(url, { headers });
      if (check.status !== 200) throw new Error(`Keyward answered ${check.status}`);
    }
    // Warm them up (JIT, statement caches, pools), then measure one after the other so they never share the CPU.
    await load(keywardUrl, headers, 3, CONNECTIONS);
    await load(countedUrl, headers, 3, CONNECTIONS);
    await load(bare.address + bareRoute, {}, 3, CONNECTIONS);
    // Without and with metrics in the order A B B A: whatever else the machine does drifts over the
    // run, and this order lays that drift equally on both.
    const off = await measure(keyward, keywardUrl, headers, SECONDS, CONNECTIONS);
    const on = await measure(counted, countedUrl, headers, SECONDS, CONNECTIONS);
    const onAgain = await measure(counted, countedUrl, headers, SECONDS, CONNECTIONS);
    const ours = meanOf(off, await measure(keyward, keywardUrl, headers, SECONDS, CONNECTIONS));
    const withMetrics = meanOf(on, onAgain);
    const yardstick = await measure(bare, bare.address + bareRoute, {}, SECONDS, CONNECTIONS);
    const rss = peakRssMiB(keyward.child.pid!);
    // The metrics process really counted: every request it answered is in its scrape.
    const scraped = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const countedRequests = /keyward_http_requests_total\{route="\/v1\/end-users\/:externalUserId",method="GET",status="200"\} (\d+)/.exec(scraped)?.[1];
    console.log(row(`Keyward GET /v1/end-users/{id} (${engine})`, ours));
    console.log(row(`  the same with metrics on`, withMetrics));
    console.log(`  (Keyward's two rows: each the mean of two loads, in the order off, on, on, off)`);
    console.log(row(`bare Fastify GET ${bareRoute}`, yardstick));
    console.log(
      `metrics on: ${((withMetrics.cpuMicros / ours.cpuMicros - 1) * 100).toFixed(1)}% CPU per request, ` +
        `${((withMetrics.result.requests.average / ours.result.requests.average - 1) * 100).toFixed(1)}% requests per second; ` +
        `its scrape counted ${countedRequests} answers of the route`,
    );
    const ratio = ours.result.requests.average / yardstick.result.requests.average;
    const cpuRatio = yardstick.cpuMicros / ours.cpuMicros;
    console.log(
      `ratio on ${engine}: ${(ratio * 100).toFixed(1)}% of the bare route's requests per second ` +
        `(by CPU per request: ${(cpuRatio * 100).toFixed(1)}%); Keyward's peak RSS ${rss} MiB\n`,
    );
  } finally {
    await Promise.all([keyward.stop(), counted.stop(), bare.stop()]);
  }
}

const dir = mkdtempSync(join(tmpdir(), 'keyward-bench-'));
const postgres = ENGINES.includes('postgres') ? await benchPostgres() : null;
console.log(`\n${CONNECTIONS} connections, ${SECONDS} s each, Node ${process.version}, KEYWARD_LOG_LEVEL=${LOG_LEVEL}\n`);
try {
  for (const engine of ENGINES) {
    await compare(engine, engine === 'postgres' ? await postgres!.database() : `sqlite:${join(dir, 'keyward.db')}`, dir);
  }
} finally {
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
}
