/**
 * Loads GET /v1/end-users/{id} (both keys, a static credential decrypted per request) on Keyward over
 * SQLite, and GET /hello on a bare Fastify route, one after the other in the same run on the same
 * machine, and prints the requests per second of each and their ratio.
 *
 *   npm run bench                  # default configuration (log level info)
 *   BENCH_SECONDS=20 npm run bench
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { loadConfig } from '../src/config.js';
import { openContext } from '../src/runtime.js';
import { createAccount } from '../src/services/accounts.js';
import { createAccountKey } from '../src/services/account-keys.js';
import { CLI_ACTOR } from '../src/services/context.js';
import { storeCredential } from '../src/services/credentials.js';
import { enableProvider } from '../src/services/providers.js';
import { createServer } from '../src/services/servers.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const LOG_LEVEL = process.env.KEYWARD_LOG_LEVEL ?? 'info';

async function seed(env: Record<string, string>) {
  const { ctx } = await openContext(loadConfig(env));
  const { accountId } = await createAccount(ctx, { name: 'Bench', email: 'bench@example.test' });
  const { serverId, serverKey } = await createServer(ctx, { accountId, name: 'bench', mode: 'business', actor: CLI_ACTOR });
  const { key } = await createAccountKey(ctx, { accountId, label: 'bench', actor: CLI_ACTOR });
  await enableProvider(ctx, { serverId, slug: 'openai', actor: CLI_ACTOR });
  const now = new Date().toISOString();
  await ctx.store.db.transaction().execute((trx) =>
    storeCredential(ctx, trx, {
      accountId,
      serverId,
      externalUserId: 'auth0|bench-user',
      provider: 'openai',
      secret: { type: 'static', values: { apiKey: `sk-bench-${randomBytes(16).toString('hex')}` } },
      actor: CLI_ACTOR,
      now,
    }),
  );
  await ctx.store.close();
  return { accountKey: key, serverKey };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createNetServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Starts a server process on a free port, its output going to a file as a service's log would
 * (reading it through a pipe here would make the two processes wait on each other), and resolves
 * once `readyPath` answers 200.
 */
async function start(command: string[], env: Record<string, string>, logFile: string, readyPath: string) {
  const port = await freePort();
  const log = openSync(logFile, 'w');
  const child = spawn(process.execPath, command, { env: { ...process.env, ...env, PORT: String(port), KEYWARD_PORT: String(port) }, stdio: ['ignore', log, 'inherit'] });
  closeSync(log);
  const address = `http://127.0.0.1:${port}`;
  for (let waited = 0; waited < 30_000 && child.exitCode === null; waited += 100) {
    const ready = await fetch(address + readyPath).then((r) => r.ok, () => false);
    if (ready) return { child, address };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`${command.join(' ')} did not start; see ${logFile}`);
}

async function load(url: string, headers: Record<string, string>, seconds: number) {
  const result = await autocannon({ url, headers, connections: CONNECTIONS, duration: seconds });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return result;
}

const dir = mkdtempSync(join(tmpdir(), 'keyward-bench-'));
const env = {
  KEYWARD_DATABASE_URL: `sqlite:${join(dir, 'keyward.db')}`,
  KEYWARD_MASTER_KEY: randomBytes(32).toString('base64'),
  KEYWARD_LOG_LEVEL: LOG_LEVEL,
  // The benchmark sends far more than the default 6,000 requests a minute on one key.
  KEYWARD_RATE_LIMIT_PER_MINUTE: '10000000',
};
const { accountKey, serverKey } = await seed(env);
// BENCH_PROFILE_DIR=… writes a V8 CPU profile of Keyward's process there, to see where the time goes.
const profile = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
const keyward = await start([...profile, 'bin/keyward.js', 'serve'], env, join(dir, 'keyward.log'), '/healthz');
const bare = await start(['--import', 'tsx', 'bench/bare-server.ts'], {}, join(dir, 'bare.log'), '/hello');

try {
  const keywardUrl = `${keyward.address}/v1/end-users/auth0%7Cbench-user`;
  const headers = { authorization: `Bearer ${accountKey}`, 'x-service-key': serverKey };
  const check = await fetch(keywardUrl, { headers });
  if (check.status !== 200) throw new Error(`Keyward answered ${check.status}`);

  // Warm both up (JIT, statement cache), then measure one after the other so they never share the CPU.
  await load(keywardUrl, headers, 3);
  await load(`${bare.address}/hello`, {}, 3);
  const ours = await load(keywardUrl, headers, SECONDS);
  const yardstick = await load(`${bare.address}/hello`, {}, SECONDS);

  const ratio = ours.requests.average / yardstick.requests.average;
  const row = (name: string, r: autocannon.Result) =>
    `${name.padEnd(44)} ${r.requests.average.toFixed(0).padStart(8)} req/s   p50 ${String(r.latency.p50).padStart(3)} ms   p99 ${String(r.latency.p99).padStart(3)} ms`;
  console.log(`\n${CONNECTIONS} connections, ${SECONDS} s each, Node ${process.version}, KEYWARD_LOG_LEVEL=${LOG_LEVEL}`);
  console.log(row('Keyward GET /v1/end-users/{id} (SQLite)', ours));
  console.log(row('bare Fastify GET /hello', yardstick));
  console.log(`ratio: ${(ratio * 100).toFixed(1)}% of the bare route's requests per second`);
} finally {
  const stopped = new Promise((resolve) => keyward.child.once('exit', resolve));
  keyward.child.kill('SIGTERM');
  bare.child.kill('SIGTERM');
  await stopped;
  rmSync(dir, { recursive: true, force: true });
}
