/**
 * GET /v1/end-users at 1,000 and at 1,000,000 members, through HTTP, in one run: one database with a
 * server of each size (rows written straight into the tables), `keyward serve` as its own process,
 * and for each server the list without a filter, with `provider=stripe` (5 members), `prefix=zz-`
 * (5 members) and both (2 members), and the tag filter (CONTRACT 10): `tag=cohort:beta` (5 members),
 * with `tag=plan:pro` beside it (5), with `provider=stripe` beside it (2), and `tag=plan:pro` alone (a
 * quarter of the audience), each from the first page and from the middle of the audience.
 * Prints per-request latency (p50/p99, one request at a time), requests per second under load, the
 * 1M/1k ratios, the peak RSS of Keyward's process while it served the 1M server under load (and where
 * its memory is right after, from its own metrics), and the
 * latency of prefixes with more matches on the 1M server (where a page's cost may still grow).
 *
 *   npm run bench:list                         # SQLite
 *   BENCH_ENGINE=postgres npm run bench:list   # an embedded PostgreSQL, or BENCH_DATABASE_URL's
 *   BENCH_SECONDS=10 BENCH_REQUESTS=1000 npm run bench:list
 *   BENCH_SIZES=1000,5000 BENCH_SECONDS=1 BENCH_REQUESTS=20 npm run bench:list   # a quick check that it runs
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RawBuilder, sql } from 'kysely';
import { Client } from 'undici';
import { loadConfig } from '../src/config.js';
import { openContext } from '../src/runtime.js';
import { encodeCursor } from '../src/services/audience/members.js';
import { CLI_ACTOR, type ServiceContext } from '../src/services/context.js';
import { createAccountKey } from '../src/services/keys/account-keys.js';
import { createServer } from '../src/services/servers/servers.js';
import { createAccount } from '../src/services/users/accounts.js';
import type { Engine } from '../src/store/store.js';
import { freePort } from '../test/helpers/embedded-postgres.js';
import { benchPostgres, latency, load, peakRssMiB, startProcess } from './processes.js';

const ENGINE = (process.env.BENCH_ENGINE ?? 'sqlite') as Engine;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 300);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
/** The two audiences compared: 1k and 1M unless BENCH_SIZES names two others (smaller first). */
const SIZES = (process.env.BENCH_SIZES ?? '1000,1000000').split(',').map(Number) as [number, number];
if (SIZES.length !== 2 || !SIZES.every((n) => Number.isInteger(n) && n >= 1_000 && n % 2 === 0))
  throw new Error('BENCH_SIZES is two even numbers of at least 1000');
const BASE = Date.UTC(2026, 0, 1);
/** Members i of a server are made one second apart: member i at BASE + i seconds. */
const createdAt = (i: number) => new Date(BASE + i * 1000).toISOString();

/** Where in the audience (a fraction of its size) the special members were made. */
const ZZ = [0.1, 0.3, 0.5, 0.7, 0.9].map((at, n) => ({ id: `zz-${n + 1}`, at }));
/** "stripe" is the provider X: two zz- members and three others have it. */
const STRIPE_ZZ = ['zz-2', 'zz-4'];
const STRIPE_OTHERS = [0.2, 0.6, 0.8];

if (ENGINE !== 'sqlite' && ENGINE !== 'postgres') throw new Error('BENCH_ENGINE is sqlite or postgres');

/**
 * One server's audience, straight into the tables: members auth0|1 … auth0|n, one a second, each with
 * one credential of openai, anthropic or github in turn (with the copies of the member's created_at
 * and id that migration 008 added), then the five zz- members and the stripe credentials. Secrets
 * are placeholders: the list never opens one. Tags (migration 019: the JSON copy on the member row,
 * and one audience_member_tags row each, with the member's created_at and id): every fourth auth0|
 * member has plan:pro and the others plan:free; the zz- members have cohort:beta and plan:pro.
 */
async function fill(ctx: ServiceContext, serverId: string, size: number) {
  const db = ctx.store.db;
  const series =
    ENGINE === 'sqlite'
      ? sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${size}) select i from n`
      : sql`select i from generate_series(1, ${size}) as i`;
  const time =
    ENGINE === 'sqlite'
      ? sql`strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || i || ' seconds')`
      : sql`to_char(timestamp '2026-01-01' + i * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  const secret = ENGINE === 'sqlite' ? sql`x'00'` : sql`'\\x00'::bytea`;
  const tag = serverId.slice(-8);
  const bulk = (statement: RawBuilder<unknown>) => statement.execute(db);
  const plan = sql`case when i % 4 = 0 then 'pro' else 'free' end`;
  await bulk(sql`insert into audience_members (id, server_id, external_user_id, created_at, updated_at, tags)
    select 'mem_' || ${tag} || '_' || i, ${serverId}, 'auth0|' || i, ${time}, ${time}, '{"plan":"' || ${plan} || '"}' from (${series}) as s`);
  await bulk(sql`insert into audience_member_tags (member_id, server_id, tag_key, tag_value, member_created_at, external_user_id)
    select 'mem_' || ${tag} || '_' || i, ${serverId}, 'plan', ${plan}, ${time}, 'auth0|' || i from (${series}) as s`);
  await bulk(sql`insert into credentials (id, server_id, member_id, provider, type, status, secret, connected_at, updated_at, member_created_at, external_user_id)
    select 'cred_' || ${tag} || '_' || i, ${serverId}, 'mem_' || ${tag} || '_' || i,
           case i % 3 when 0 then 'openai' when 1 then 'anthropic' else 'github' end,
           case i % 3 when 0 then 'static' when 1 then 'static' else 'oauth2' end, 'active', ${secret}, ${time}, ${time}, ${time}, 'auth0|' || i
    from (${series}) as s`);
  const place = (fraction: number) => Math.round(size * fraction);
  await bulk(
    sql`insert into audience_members (id, server_id, external_user_id, created_at, updated_at, tags) values ${sql.join(
      ZZ.map(
        (z) => sql`(${`mem_${tag}_${z.id}`}, ${serverId}, ${z.id}, ${createdAt(place(z.at))}, ${createdAt(place(z.at))}, '{"cohort":"beta","plan":"pro"}')`,
      ),
    )}`,
  );
  for (const [key, value] of [
    ['cohort', 'beta'],
    ['plan', 'pro'],
  ]) {
    await bulk(sql`insert into audience_member_tags (member_id, server_id, tag_key, tag_value, member_created_at, external_user_id)
      select m.id, m.server_id, ${key}, ${value}, m.created_at, m.external_user_id
      from audience_members m where m.server_id = ${serverId} and m.external_user_id in (${sql.join(ZZ.map((z) => z.id))})`);
  }
  // The stripe credentials take their copies of created_at and the id from their member rows.
  const stripe = [...STRIPE_ZZ, ...STRIPE_OTHERS.map((f) => `auth0|${place(f)}`)];
  await bulk(sql`insert into credentials (id, server_id, member_id, provider, type, status, secret, connected_at, updated_at, member_created_at, external_user_id)
    select 'cred_' || ${tag} || '_stripe_' || m.external_user_id, m.server_id, m.id, 'stripe', 'static', 'active', ${secret},
           m.created_at, m.created_at, m.created_at, m.external_user_id
    from audience_members m where m.server_id = ${serverId} and m.external_user_id in (${sql.join(stripe)})`);
}

async function seed(env: Record<string, string>) {
  const { ctx } = await openContext(loadConfig(env));
  try {
    const { accountId } = await createAccount(ctx, { name: 'Bench', email: 'bench@example.test' });
    const { key } = await createAccountKey(ctx, { accountId, label: 'bench', actor: CLI_ACTOR });
    const servers = [];
    for (const size of SIZES) {
      const { serverId, serverKey } = await createServer(ctx, { accountId, name: `${size} members`, mode: 'business', actor: CLI_ACTOR });
      const started = Date.now();
      await fill(ctx, serverId, size);
      console.log(`filled the ${size.toLocaleString('en')}-member server in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      // A deep page: the one after the member in the middle of the audience.
      const middle = size / 2;
      servers.push({
        size,
        headers: { authorization: `Bearer ${key}`, 'x-service-key': serverKey },
        middle: encodeCursor(ctx, createdAt(middle), `auth0|${middle}`),
      });
    }
    // What autovacuum would do after such a fill, done now so that it does not run during the measurements.
    await (ENGINE === 'postgres' ? sql`vacuum analyze` : sql`analyze`).execute(ctx.store.db);
    return servers;
  } finally {
    await ctx.store.close();
  }
}

/** A list's latency, and how many members its last answer listed. */
async function listLatency(client: Client, path: string, headers: Record<string, string>, count: number) {
  const { p50, p99, body } = await latency(client, path, headers, count);
  return { p50, p99, members: (JSON.parse(body) as { data: unknown[] }).data.length };
}

const FILTERS = [
  ['no filter', ''],
  ['provider=stripe', '&provider=stripe'],
  ['prefix=zz-', '&prefix=zz-'],
  ['both', '&provider=stripe&prefix=zz-'],
  ['tag cohort:beta', '&tag=cohort%3Abeta'],
  ['tag cohort:beta, plan:pro', '&tag=plan%3Apro&tag=cohort%3Abeta'],
  ['tag cohort:beta, stripe', '&tag=cohort%3Abeta&provider=stripe'],
  ['tag plan:pro (a quarter)', '&tag=plan%3Apro'],
] as const;

/**
 * The process's memory by where it is, from its own metrics (prom-client's process defaults): RSS, V8's
 * young generation ("new"), its old generation, large objects and code, and memory V8 does not hold
 * (buffers, the SQLite addon's and the drivers' allocations, less what V8 counts as external).
 */
async function memoryBreakdown(metricsUrl: string): Promise<string> {
  const scrape = await (await fetch(metricsUrl)).text();
  const value = (name: string, labels = '') => {
    const line = scrape.split('\n').find((l) => l.startsWith(`${name}${labels} `));
    if (!line) throw new Error(`no ${name}${labels} in the metrics`);
    return Number(line.split(' ')[1]) / 1048576;
  };
  const space = (name: string) => value('nodejs_heap_space_size_total_bytes', `{space="${name}"}`);
  const rss = value('process_resident_memory_bytes');
  const heap = value('nodejs_heap_size_total_bytes');
  const f = (n: number) => n.toFixed(1);
  return `RSS ${f(rss)} MiB = V8 heap ${f(heap)} (new ${f(space('new'))}, old ${f(space('old'))}, large objects ${f(
    space('large_object') + space('new_large_object'),
  )}, code ${f(space('code'))}) + outside the heap ${f(rss - heap)} (of which external ${f(value('nodejs_external_memory_bytes'))})`;
}

/** Prefixes of auth0|<i> on the 1M server with more and more matches (ids in creation order, so each is a few runs in time). */
const GROWING = ['auth0|99999', 'auth0|9999', 'auth0|999', 'auth0|99', 'auth0|9'];

const dir = mkdtempSync(join(tmpdir(), 'keyward-bench-list-'));
const postgres = ENGINE === 'postgres' ? await benchPostgres() : null;
try {
  const env = {
    KEYWARD_DATABASE_URL: postgres ? await postgres.database() : `sqlite:${join(dir, 'keyward.db')}`,
    KEYWARD_MASTER_KEY: randomBytes(32).toString('base64'),
    KEYWARD_LOG_LEVEL: process.env.KEYWARD_LOG_LEVEL ?? 'info',
    KEYWARD_RATE_LIMIT_PER_MINUTE: '10000000',
  };
  const servers = await seed(env);
  // Read once, after the load: where the process's memory is (V8's spaces, memory outside the heap).
  const metricsUrl = await freePort().then((port) => ({ port: String(port), url: `http://127.0.0.1:${port}/metrics` }));
  const keyward = await startProcess(['bin/keyward.js', 'serve'], { ...env, KEYWARD_METRICS_PORT: metricsUrl.port }, join(dir, 'keyward.log'), '/healthz');
  const client = new Client(keyward.address, { pipelining: 1 });
  try {
    const ms = (n: number) => n.toFixed(2).padStart(7);
    // Warm Keyward up (JIT, statement caches) so that the first measured case is not also the first run.
    for (const server of servers) await load(`${keyward.address}/v1/end-users?limit=20`, server.headers, 2, CONNECTIONS);
    console.log(`\n${ENGINE}, Node ${process.version}; latency: ${REQUESTS} requests one at a time; req/s: ${CONNECTIONS} connections for ${SECONDS} s\n`);
    console.log('query                          page   members |     1k p50     p99   req/s |     1M p50     p99   req/s | 1M/1k p50  req/s');
    for (const [name, query] of FILTERS) {
      for (const page of ['first', 'deep'] as const) {
        const measured = [];
        for (const server of servers) {
          const path = `/v1/end-users?limit=20${query}${page === 'deep' ? `&cursor=${encodeURIComponent(server.middle)}` : ''}`;
          await listLatency(client, path, server.headers, 30);
          const timing = await listLatency(client, path, server.headers, REQUESTS);
          const loaded = await load(keyward.address + path, server.headers, SECONDS, CONNECTIONS);
          measured.push({ ...timing, rate: loaded.requests.average });
        }
        const [small, large] = measured as [(typeof measured)[0], (typeof measured)[0]];
        if (small.members !== large.members) throw new Error(`${name} ${page}: ${small.members} members at 1k, ${large.members} at 1M`);
        const line =
          `${name.padEnd(30)} ${page.padEnd(6)} ${String(small.members).padStart(7)} | ${ms(small.p50)} ${ms(small.p99)} ${small.rate.toFixed(0).padStart(7)} |` +
          ` ${ms(large.p50)} ${ms(large.p99)} ${large.rate.toFixed(0).padStart(7)} | ${(large.p50 / small.p50).toFixed(2).padStart(8)}× ${(small.rate / large.rate).toFixed(2).padStart(5)}×`;
        console.log(line);
      }
    }
    // The kernel's high-water mark: the 1k server uses less, so the peak is the 1M server's under load.
    console.log(`\npeak RSS of Keyward while serving the 1,000,000-member server under load: ${peakRssMiB(keyward.child.pid!)} MiB`);
    console.log(`right after that load: ${await memoryBreakdown(metricsUrl.url)}`);

    console.log('\nprefixes with more matches, 1M server (latency only)');
    console.log('prefix          matches  first p50     p99 |  deep p50     p99');
    const large = servers[1]!;
    for (const prefix of GROWING) {
      const matches = [1, 10, 100, 1_000, 10_000, 100_000].slice(0, 13 - prefix.length).reduce((a, b) => a + b, 0);
      const timings = [];
      for (const page of ['first', 'deep']) {
        const path = `/v1/end-users?limit=20&prefix=${encodeURIComponent(prefix)}${page === 'deep' ? `&cursor=${encodeURIComponent(large.middle)}` : ''}`;
        await listLatency(client, path, large.headers, 5);
        timings.push(await listLatency(client, path, large.headers, Math.max(20, REQUESTS / 10)));
      }
      console.log(
        `${prefix.padEnd(15)} ${String(matches).padStart(7)} ${ms(timings[0]!.p50)} ${ms(timings[0]!.p99)} | ${ms(timings[1]!.p50)} ${ms(timings[1]!.p99)}`,
      );
    }
  } finally {
    await client.close();
    await keyward.stop();
  }
} finally {
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
}
