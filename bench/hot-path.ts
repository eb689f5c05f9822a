/**
 * CPU per request of GET /v1/end-users/{id} inside one process, through app.inject (no sockets, no
 * HTTP parsing): the part of the read that is Keyward's own code, steady enough to compare two builds
 * of it on a busy machine where the socket benchmark's figures swing by a third (bench/RESULTS.md,
 * "The read against its floor: the cuts"). The info log line is written, to /dev/null, as `serve`
 * writes it (a 4 KiB buffer).
 *
 *   npm exec -- tsx bench/hot-path.ts                 # both engines
 *   BENCH_ENGINES=sqlite BENCH_ROUNDS=7 BENCH_REQUESTS=20000 npm exec -- tsx bench/hot-path.ts
 *   BENCH_PROFILE=1 npm exec -- tsx --cpu-prof bench/hot-path.ts
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/primitives/logger.js';
import { openContext } from '../src/runtime.js';
import { CLI_ACTOR } from '../src/services/context.js';
import { storeCredential } from '../src/services/credentials/credentials.js';
import { createAccountKey } from '../src/services/keys/account-keys.js';
import { enableProvider } from '../src/services/providers/server-providers.js';
import { createServer } from '../src/services/servers/servers.js';
import { createAccount } from '../src/services/users/accounts.js';
import type { Engine } from '../src/store/store.js';
import { benchPostgres } from './processes.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 10_000);
const CONCURRENCY = 10;
const ENGINES = (process.env.BENCH_ENGINES ?? 'sqlite,postgres').split(',') as Engine[];
const MEMBER = 'auth0|bench-user';

async function measure(engine: Engine, databaseUrl: string) {
  const config = loadConfig({
    KEYWARD_DATABASE_URL: databaseUrl,
    KEYWARD_MASTER_KEY: randomBytes(32).toString('base64'),
    KEYWARD_RATE_LIMIT_PER_MINUTE: '10000000',
  });
  const { ctx } = await openContext(config);
  const { accountId } = await createAccount(ctx, { name: 'Bench', email: 'bench@example.test' });
  const { serverId, serverKey } = await createServer(ctx, { accountId, name: 'bench', mode: 'business', actor: CLI_ACTOR });
  const { key } = await createAccountKey(ctx, { accountId, label: 'bench', actor: CLI_ACTOR });
  await enableProvider(ctx, { serverId, slug: 'openai', actor: CLI_ACTOR });
  const secret = { type: 'static' as const, values: { apiKey: `sk-bench-${randomBytes(16).toString('hex')}` } };
  await storeCredential(ctx, { accountId, serverId, externalUserId: MEMBER, provider: 'openai', secret, actor: CLI_ACTOR, now: new Date().toISOString() });
  const logger = createLogger('info', pino.destination({ dest: '/dev/null', sync: false, minLength: 4096 }));
  const app = await buildApp({ ctx, logger, rateLimitPerMinute: 10_000_000, authFailureLimitPerMinute: 100 });
  const request = {
    method: 'GET' as const,
    url: `/v1/end-users/${encodeURIComponent(MEMBER)}`,
    headers: { authorization: `Bearer ${key}`, 'x-service-key': serverKey },
  };
  const check = await app.inject(request);
  if (check.statusCode !== 200) throw new Error(`Keyward answered ${check.statusCode}: ${check.body}`);
  const batch = async (count: number) => {
    for (let sent = 0; sent < count; sent += CONCURRENCY) {
      await Promise.all(Array.from({ length: CONCURRENCY }, () => app.inject(request)));
    }
  };
  await batch(REQUESTS); // warm-up: JIT, statement caches, the pool
  const figures: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const before = process.cpuUsage();
    await batch(REQUESTS);
    const used = process.cpuUsage(before);
    figures.push((used.user + used.system) / REQUESTS);
  }
  await app.close();
  await ctx.store.close();
  const sorted = [...figures].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  console.log(
    `${engine.padEnd(8)} median ${median.toFixed(1)} µs CPU/request (rounds: ${figures.map((f) => f.toFixed(1)).join(', ')}), ${REQUESTS} requests a round`,
  );
}

const dir = mkdtempSync(join(tmpdir(), 'keyward-hot-path-'));
const postgres = ENGINES.includes('postgres') ? await benchPostgres() : null;
try {
  for (const engine of ENGINES) await measure(engine, engine === 'postgres' ? await postgres!.database() : `sqlite:${join(dir, 'keyward.db')}`);
} finally {
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
}
