/**
 * The gateway's proxy (CONTRACT 8.1) when its calls are spread over an audience, on each engine: one
 * server with 1,000,000 members, each with a static credential of a custom provider whose
 * `apiBaseUrl` is a local upstream (bench/proxy-upstream.ts), and loads in interleaved rounds where
 * each request names the next member in turn:
 *
 * - over the first 1,000 members: each is called again every 1,000 requests, so after the first
 *   round of them their reads may be kept (on SQLite, store/reads-until-change.ts) and their
 *   lastUsedAt is recent (a write a minute each, services/credentials/usage.ts);
 * - over all 1,000,000: no member is called twice in a run, so every call reads its member afresh
 *   and writes its first lastUsedAt, a commit each.
 *
 * Each through Keyward (`keyward serve`, its default configuration) and through the floor
 * (bench/proxy-floor.ts with a token for every member in a Map): Keyward's CPU per call against the
 * floor's, and 1,000,000 against 1,000. bench/proxy.ts measures the one busy member's case, the
 * memory, and the direct calls.
 *
 *   npm run bench:proxy-audience                     # both engines, 3 rounds of 10 s
 *   BENCH_SECONDS=6 BENCH_ENGINES=sqlite npm run bench:proxy-audience
 *   BENCH_AUDIENCE=100000 npm run bench:proxy-audience   # a smaller large audience, for a quick look
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.js';
import { openContext } from '../src/runtime.js';
import { credentialAad } from '../src/services/credentials/credentials.js';
import type { Engine } from '../src/store/store.js';
import { benchPostgres, type Started, startProcess } from './processes.js';
import { benchServer, type Contender, contender, interleavedRounds, meanOf, PROVIDER, ratiosPerRound, row } from './proxy-load.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const ENGINES = (process.env.BENCH_ENGINES ?? 'sqlite,postgres').split(',') as Engine[];
const AUDIENCE = Number(process.env.BENCH_AUDIENCE ?? 1_000_000);
const SPREADS = [1_000, AUDIENCE];
const PREFIX = 'auth0|spread-';
/** Rows a statement inserts: 22 columns a credential, within both engines' limits on parameters. */
const BATCH = 1_000;

/** The audience, written straight into the tables a batch at a time, each secret sealed as storeCredential seals it. */
async function seed(env: Record<string, string>, upstreamUrl: string, token: string) {
  const { ctx } = await openContext(loadConfig(env));
  const { serverId, headers } = await benchServer(ctx, 'Bench audience', upstreamUrl);
  const started = performance.now();
  const now = new Date().toISOString();
  for (let first = 1; first <= AUDIENCE; first += BATCH) {
    const numbers = Array.from({ length: Math.min(BATCH, AUDIENCE - first + 1) }, (_, i) => first + i);
    const members = numbers.map((n) => ({ id: `mem_spread_${n}`, server_id: serverId, external_user_id: `${PREFIX}${n}`, created_at: now, updated_at: now }));
    const credentials = numbers.map((n) => ({
      id: `cred_spread_${n}`,
      server_id: serverId,
      member_id: `mem_spread_${n}`,
      provider: PROVIDER,
      type: 'static' as const,
      status: 'active' as const,
      secret: ctx.vault.sealJson({ type: 'static', values: { apiKey: token } }, credentialAad(`cred_spread_${n}`, serverId, `mem_spread_${n}`)),
      access_expires_at: null,
      scopes: null,
      error_code: null,
      error_message: null,
      connected_at: now,
      updated_at: now,
      refreshed_at: null,
      refresh_lease_until: null,
      refresh_lease_holder: null,
      refresh_attempted_at: null,
      member_created_at: now,
      external_user_id: `${PREFIX}${n}`,
      last_used_at: null,
      last_check_at: null,
      last_check_outcome: null,
    }));
    await ctx.store.db.transaction().execute(async (trx) => {
      await trx.insertInto('audience_members').values(members).execute();
      await trx.insertInto('credentials').values(credentials).execute();
    });
  }
  await ctx.store.close();
  console.log(`seeded ${AUDIENCE.toLocaleString('en')} members with a credential each in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  return headers;
}

/** Each request's path: the next member of the first `spread`, in turn. */
function spreadOver(spread: number, base: string): () => string {
  let next = 0;
  return () => {
    next = (next % spread) + 1;
    return `${base}/v1/end-users/${encodeURIComponent(`${PREFIX}${next}`)}/proxy/${PROVIDER}/v1/small`;
  };
}

async function spreadRounds(engine: Engine, upstream: Started, spread: number, ours: Contender, floor: Contender) {
  const what = `${engine}, over ${spread.toLocaleString('en')} members`;
  await interleavedRounds(what, upstream, [ours, floor], ours, floor, { seconds: SECONDS, rounds: ROUNDS, connections: CONNECTIONS });
  const [o, f] = [meanOf(ours.loads), meanOf(floor.loads)];
  return { keyward: o.proxyCpu!, floor: f.proxyCpu!, lines: [row(ours.name, o), row(floor.name, f)], perRound: ratiosPerRound(ours, floor) };
}

async function compare(engine: Engine, databaseUrl: string, dir: string): Promise<string[]> {
  const token = `sk-bench-${randomBytes(16).toString('hex')}`;
  const upstream = await startProcess(['bench/proxy-upstream.ts'], { UPSTREAM_TOKEN: token }, join(dir, `upstream-${engine}.log`), '/ready');
  const started: Started[] = [upstream];
  try {
    const env = {
      KEYWARD_DATABASE_URL: databaseUrl,
      KEYWARD_MASTER_KEY: randomBytes(32).toString('base64'),
      KEYWARD_LOG_LEVEL: process.env.KEYWARD_LOG_LEVEL ?? 'info',
      KEYWARD_RATE_LIMIT_PER_MINUTE: '10000000',
      KEYWARD_ALLOW_PRIVATE_URLS: 'true',
    };
    const headers = await seed(env, upstream.address, token);
    const keyward = await startProcess(['bin/keyward.js', 'serve'], env, join(dir, `keyward-${engine}.log`), '/healthz');
    started.push(keyward);
    const floor = await startProcess(
      ['bench/proxy-floor.ts'],
      {
        FLOOR_UPSTREAM_URL: upstream.address,
        FLOOR_AUDIENCE_PREFIX: PREFIX,
        FLOOR_AUDIENCE_SIZE: String(AUDIENCE),
        FLOOR_PROVIDER: PROVIDER,
        FLOOR_TOKEN: token,
      },
      join(dir, `floor-proxy-${engine}.log`),
      '/ready',
    );
    started.push(floor);
    const summary: string[] = [];
    const results = [];
    for (const spread of SPREADS) {
      const ours = contender(`Keyward (${engine}), over ${spread.toLocaleString('en')}`, keyward, keyward.address, headers, spreadOver(spread, ''));
      const floors = contender(`floor, over ${spread.toLocaleString('en')}`, floor, floor.address, headers, spreadOver(spread, ''));
      const result = await spreadRounds(engine, upstream, spread, ours, floors);
      results.push({ spread, ...result });
    }
    summary.push(`\nsummary on ${engine}, the mean of ${ROUNDS} round(s) at ${CONNECTIONS} connections:`);
    for (const r of results) {
      summary.push(...r.lines);
      summary.push(
        `  over ${r.spread.toLocaleString('en')} members: Keyward ${r.keyward.toFixed(0)} µs against the floor's ${r.floor.toFixed(0)} µs a call, ` +
          `${(r.keyward / r.floor).toFixed(2)}× (per round ${r.perRound})`,
      );
    }
    const [small, large] = results as [(typeof results)[0], (typeof results)[0]];
    summary.push(
      `  ${AUDIENCE.toLocaleString('en')} against 1,000 members: Keyward ${(large.keyward / small.keyward).toFixed(2)}×, the floor ${(large.floor / small.floor).toFixed(2)}×`,
    );
    for (const line of summary) console.log(line);
    return summary;
  } finally {
    await Promise.all(started.map((s) => s.stop()));
  }
}

const dir = mkdtempSync(join(tmpdir(), 'keyward-bench-audience-'));
const postgres = ENGINES.includes('postgres') ? await benchPostgres() : null;
console.log(
  `\n${CONNECTIONS} connections, ${SECONDS} s each, ${ROUNDS} round(s), Node ${process.version}, load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}\n`,
);
const summaries: string[] = [];
try {
  for (const engine of ENGINES) {
    summaries.push(...(await compare(engine, engine === 'postgres' ? await postgres!.database() : `sqlite:${join(dir, 'keyward.db')}`, dir)));
  }
} finally {
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
}
if (ENGINES.length > 1) console.log(`\nall summaries again:${summaries.join('\n')}`);
console.log(
  `\nload average at the end ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
