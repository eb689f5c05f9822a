/**
 * Webhooks, in one run on each engine (SQLite, then PostgreSQL), each case on a fresh database with
 * `keyward serve` as its own process and the test suite's webhook receiver (a node:http server on
 * 127.0.0.1) in a worker thread of this one (receiver-thread.ts: the client's latencies are then not
 * the time this process's event loop spent answering webhooks first):
 *
 * 1. Deliveries per second: N messages written to the outbox through the real path (recordEvent, in
 *    one transaction) while the process runs, for 1 endpoint and for 10 (the dispatcher's bounds are
 *    4 attempts in flight per endpoint, 8 per account, 32 per node: the endpoints are one account's); timed from the receiver's first request to the
 *    moment the database says every message is delivered; 500 at once, then N (5,000) at once.
 * 2. The hosted form's POST with no webhook endpoint, with 1 and with 10: form sessions made through
 *    the API and their pages opened first, then each form POSTed once (distinct end users, so each
 *    POST stores one new credential and writes one credential.connected per endpoint). While the
 *    POSTs are measured the receiver holds its requests open, so the dispatcher holds its few slots
 *    and sends nothing else: the figure is the POST with its outbox write, not the deliveries (part 1
 *    prices those). A last case lets the receiver answer 204, deliveries running beside the POSTs.
 * 3. `GET /v1/end-users/{id}` one at a time, 10,000 idle and then while a backlog of 10,000 messages
 *    to 10 endpoints drains: both p99s and their ratio (the aim: at most 1.5).
 *
 * CPU is Keyward's process (/proc) and, on PostgreSQL, the server's backends for the case's database.
 *
 *   npm run bench:webhooks
 *   BENCH_ENGINES=sqlite BENCH_MESSAGES=10000 BENCH_FORMS=3000 npm run bench:webhooks
 *   BENCH_CONNECTIONS=4 npm run bench:webhooks   # POST forms on 4 connections at once (default: one at a time)
 *   BENCH_PROFILE_DIR=/tmp/profile npm run bench:webhooks   # a V8 CPU profile of each Keyward process
 *   BENCH_PARTS=deliveries,reads npm run bench:webhooks    # some parts only (deliveries, reads, forms)
 *   BENCH_PARTS=reads BENCH_IDLE_READS=3000 BENCH_READS_BACKLOG=5000 npm run bench:webhooks   # p99s over fewer GETs (the earlier defaults)
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { Pool } from 'undici';
import { loadConfig } from '../src/config.js';
import { openContext } from '../src/runtime.js';
import { CLI_ACTOR, type ServiceContext } from '../src/services/context.js';
import { createAccountKey } from '../src/services/keys/account-keys.js';
import { enableProvider } from '../src/services/providers/server-providers.js';
import { createServer } from '../src/services/servers/servers.js';
import { createAccount } from '../src/services/users/accounts.js';
import { addWebhookEndpoint } from '../src/services/webhooks/webhook-endpoints.js';
import { recordEvent, type WebhookEvent } from '../src/services/webhooks/webhook-events.js';
import type { Engine } from '../src/store/store.js';
import { type ReceivedWebhook, type ReceiverAnswer, verifiedEvent } from '../test/helpers/webhook-receiver.js';
import { benchPostgres, cpuSeconds, type Started, startProcess } from './processes.js';
import { startReceiverThread, type ThreadReceiver } from './receiver-thread.js';

const ENGINES = (process.env.BENCH_ENGINES ?? 'sqlite,postgres').split(',') as Engine[];
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 5000);
const FORMS = Number(process.env.BENCH_FORMS ?? 2000);
/** Which parts run (1 deliveries, 2 forms, 3 reads while draining): all unless told. */
const PARTS = (process.env.BENCH_PARTS ?? 'deliveries,reads,forms').split(',');
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 1);
const LOG_LEVEL = process.env.KEYWARD_LOG_LEVEL ?? 'info';
const PROFILE = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
/** Sent or POSTed before measuring, so JIT, statement caches and pools are warm. */
const WARMUP_MESSAGES = 2000;
/** The small batch measured beside the full one. */
const SMALL_BATCH = 500;
const WARMUP_FORMS = 500;
/** Connections used to make and open the forms (not measured). */
const SETUP_CONNECTIONS = 4;

interface Case {
  ctx: ServiceContext;
  serverId: string;
  headers: Record<string, string>;
  secrets: string[];
  receiver: ThreadReceiver;
  keyward: Started;
}

/**
 * A fresh database with one business server (OpenAI enabled, an account key) and `endpoints`
 * endpoints on the receiver, then `keyward serve` on it; `run` gets both, and a context of this
 * process on the same database. Everything is stopped after, Keyward first (its hanging attempts abort).
 */
async function withCase<T>(databaseUrl: string, endpoints: number, answer: ReceiverAnswer, log: string, run: (c: Case) => Promise<T>): Promise<T> {
  const env = {
    KEYWARD_DATABASE_URL: databaseUrl,
    KEYWARD_MASTER_KEY: randomBytes(32).toString('base64'),
    KEYWARD_LOG_LEVEL: LOG_LEVEL,
    // The receiver is on 127.0.0.1.
    KEYWARD_ALLOW_PRIVATE_URLS: 'true',
    // Thousands of API calls on one key in a few seconds.
    KEYWARD_RATE_LIMIT_PER_MINUTE: '10000000',
  };
  const receiver = await startReceiverThread(answer);
  const { ctx } = await openContext(loadConfig(env));
  let keyward: Started | undefined;
  try {
    const { accountId } = await createAccount(ctx, { name: 'Bench', email: 'bench@example.test' });
    const { serverId, serverKey } = await createServer(ctx, { accountId, name: 'bench', mode: 'business', actor: CLI_ACTOR });
    const { key } = await createAccountKey(ctx, { accountId, label: 'bench', actor: CLI_ACTOR });
    await enableProvider(ctx, { serverId, slug: 'openai', actor: CLI_ACTOR });
    const secrets: string[] = [];
    for (let i = 0; i < endpoints; i++) {
      secrets.push((await addWebhookEndpoint(ctx, { serverId, url: `${receiver.url}/${i}`, actor: CLI_ACTOR })).secret);
    }
    keyward = await startProcess([...PROFILE, 'bin/keyward.js', 'serve'], env, log, '/healthz');
    const headers = { authorization: `Bearer ${key}`, 'x-service-key': serverKey };
    return await run({ ctx, serverId, headers, secrets, receiver, keyward });
  } finally {
    await keyward?.stop();
    await receiver.close();
    await ctx.store.close();
  }
}

// ---- Measuring ----

/** The outbox as the database has it. */
async function outbox(ctx: ServiceContext) {
  const { rows } = await sql<{ messages: string | number; delivered: string | number; attempts: string | number }>`
    select count(*) as messages,
           count(case when status = 'delivered' then 1 end) as delivered,
           (select count(*) from webhook_attempts) as attempts
    from webhook_messages`.execute(ctx.store.db);
  const row = rows[0]!;
  return { messages: Number(row.messages), delivered: Number(row.delivered), attempts: Number(row.attempts) };
}

/**
 * CPU seconds used so far by each of PostgreSQL's backends for this database (Keyward's pool, and
 * this process's own connection, idle while measuring); null on SQLite, where Keyward's process
 * does the database's work itself.
 */
async function backendCpu(c: Case): Promise<Map<number, number> | null> {
  if (c.ctx.store.engine !== 'postgres') return null;
  const { rows } = await sql<{ pid: number }>`select pid from pg_stat_activity where datname = current_database()`.execute(c.ctx.store.db);
  const cpu = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      cpu.set(pid, cpuSeconds(pid));
    } catch {
      // Ended since: what it used is lost to the figure (under load Keyward's pool keeps its connections).
    }
  }
  return cpu;
}

/** Starts counting CPU; the returned function gives Keyward's and the database backends' µs since, per `count`. */
async function cpuMeter(c: Case) {
  const keyward = cpuSeconds(c.keyward.child.pid!);
  const backends = await backendCpu(c);
  return async (count: number) => {
    const keywardMicros = ((cpuSeconds(c.keyward.child.pid!) - keyward) * 1e6) / count;
    const after = backends && (await backendCpu(c));
    // A backend that started meanwhile counts from zero.
    const spent = after && [...after].reduce((sum, [pid, seconds]) => sum + seconds - (backends!.get(pid) ?? 0), 0);
    return { keywardMicros, databaseMicros: spent === null ? null : (spent * 1e6) / count };
  };
}

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const percentile = (sorted: number[], p: number) => sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;
const micros = (n: number | null) => (n === null ? '' : `${n.toFixed(0)} µs`);

// ---- 1. Deliveries per second ----

function benchEvent(serverId: string, i: number): WebhookEvent {
  const at = new Date().toISOString();
  return {
    type: 'credential.connected',
    serverId,
    at,
    data: {
      externalUserId: `bench-user-${i}`,
      credential: { id: `cred_bench${i}`, provider: 'openai', type: 'static', status: 'active', connectedAt: at, updatedAt: at },
      sessionId: `cfs_bench${i}`,
    },
  };
}

/** Writes `messages` messages (an event makes one per endpoint) in one transaction and waits until all are delivered. */
async function deliver(c: Case, messages: number) {
  const events = Math.ceil(messages / c.secrets.length);
  const sent = await c.receiver.count();
  const expected = (await outbox(c.ctx)).messages + events * c.secrets.length;
  await c.ctx.store.transaction(async () => {
    for (let i = 0; i < events; i++) await recordEvent(c.ctx, benchEvent(c.serverId, i));
  });
  const committedAt = Date.now();
  const cpu = await cpuMeter(c);
  // The receiver's thread counts; the database is asked only once it has every request.
  await until(async () => (await c.receiver.count()) >= sent + events * c.secrets.length, 'the receiver');
  await until(async () => (await outbox(c.ctx)).delivered >= expected, 'the outbox');
  const endedAt = Date.now();
  const cost = await cpu(events * c.secrets.length);
  const batch = await c.receiver.since(sent);
  // Each request signed as standardwebhooks verifies, by one of the endpoints' secrets (sampled: the first).
  if (!c.secrets.some((secret) => verifies(secret, batch[0]!))) throw new Error('the first delivery did not verify');
  const { messages: total, attempts } = await outbox(c.ctx);
  return {
    delivered: events * c.secrets.length,
    seconds: (endedAt - batch[0]!.receivedAt) / 1000,
    firstAfterMs: batch[0]!.receivedAt - committedAt,
    duplicates: batch.length - new Set(batch.map((w) => w.headers['webhook-id'])).size,
    attemptsPerMessage: attempts / total,
    ...cost,
  };
}

function verifies(secret: string, webhook: ReceivedWebhook): boolean {
  try {
    verifiedEvent(secret, webhook);
    return true;
  } catch {
    return false;
  }
}

/**
 * After a warm-up, a small batch and then the full one: what a delivery costs may depend on how many
 * messages are waiting (the dispatcher looks for due endpoints among them on every round).
 */
async function deliveryRate(engine: Engine, databaseUrl: string, endpoints: number, dir: string) {
  return withCase(databaseUrl, endpoints, { status: 204 }, join(dir, `deliveries-${engine}-${endpoints}.log`), async (c) => {
    await deliver(c, WARMUP_MESSAGES);
    for (const messages of [SMALL_BATCH, MESSAGES]) {
      const r = await deliver(c, messages);
      console.log(
        `${engine.padEnd(8)} ${String(endpoints).padStart(2)} endpoint(s), ${String(r.delivered).padStart(6)} at once: ${r.seconds.toFixed(2).padStart(6)} s = ` +
          `${(r.delivered / r.seconds).toFixed(0).padStart(5)} deliveries/s   Keyward ${micros(r.keywardMicros).padStart(7)} CPU/delivery` +
          `${r.databaseMicros === null ? '' : `   PostgreSQL backends ${micros(r.databaseMicros).padStart(7)}`}   ` +
          `(first request ${r.firstAfterMs} ms after the commit; ${r.attemptsPerMessage.toFixed(2)} attempts a message; ${r.duplicates} duplicates)`,
      );
    }
  });
}

// ---- 2. The hosted form's POST ----

interface OpenedForm {
  path: string;
  body: string;
}

/** One request that must answer `expected`; `what` names it in an error (a form's path holds its token). */
async function send(pool: Pool, what: string, options: Parameters<Pool['request']>[0], expected: number) {
  const response = await pool.request(options);
  const body = await response.body.text();
  if (response.statusCode !== expected) throw new Error(`${what} answered ${response.statusCode}, not ${expected}`);
  return { headers: response.headers, body };
}

/** Runs `fn` over `items` on `connections` at once, in order. */
async function each<T>(items: readonly T[], connections: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      await fn(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
}

/** Form sessions made through the API, each page opened as a browser would (one CSRF cookie for all), with the body its POST will send. */
async function openForms(c: Case, pool: Pool, count: number): Promise<{ forms: OpenedForm[]; cookie: string }> {
  const paths: string[] = new Array(count);
  await each(paths, SETUP_CONNECTIONS, async (_, i) => {
    const created = await send(
      pool,
      'POST /v1/credentials/static/openai/connect',
      {
        method: 'POST',
        path: '/v1/credentials/static/openai/connect',
        headers: { ...c.headers, 'content-type': 'application/json' },
        body: JSON.stringify({ externalUserId: `form-user-${i}` }),
      },
      201,
    );
    paths[i] = new URL((JSON.parse(created.body) as { url: string }).url).pathname;
  });
  const first = await send(pool, 'the first form page', { method: 'GET', path: paths[0]! }, 200);
  const cookie = String(first.headers['set-cookie']).split(';')[0]!;
  const forms: OpenedForm[] = new Array(count);
  await each(paths, SETUP_CONNECTIONS, async (path, i) => {
    const page = i === 0 ? first : await send(pool, 'a form page', { method: 'GET', path, headers: { cookie } }, 200);
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)?.[1];
    if (!csrf) throw new Error('a form page has no csrf field');
    forms[i] = { path, body: new URLSearchParams({ csrf, apiKey: `sk-bench-${randomBytes(16).toString('hex')}` }).toString() };
  });
  return { forms, cookie };
}

/** POSTs each form once; the latency of each, in ms. */
async function postForms(pool: Pool, forms: readonly OpenedForm[], cookie: string): Promise<number[]> {
  const latencies: number[] = [];
  await each(forms, CONNECTIONS, async (form) => {
    const began = performance.now();
    await send(
      pool,
      'a form POST',
      { method: 'POST', path: form.path, headers: { 'content-type': 'application/x-www-form-urlencoded', cookie }, body: form.body },
      200,
    );
    latencies.push(performance.now() - began);
  });
  return latencies.sort((a, b) => a - b);
}

const FORM_CASES: { name: string; endpoints: number; answer: ReceiverAnswer }[] = [
  { name: 'no endpoint', endpoints: 0, answer: 'hang' },
  { name: '1 endpoint, receiver holding', endpoints: 1, answer: 'hang' },
  { name: '10 endpoints, receiver holding', endpoints: 10, answer: 'hang' },
  { name: '10 endpoints, receiver answering', endpoints: 10, answer: { status: 204 } },
];

async function formCost(engine: Engine, databaseUrl: string, formCase: (typeof FORM_CASES)[number], dir: string) {
  const log = join(dir, `forms-${engine}-${formCase.endpoints}-${formCase.answer === 'hang' ? 'held' : 'sent'}.log`);
  return withCase(databaseUrl, formCase.endpoints, formCase.answer, log, async (c) => {
    const pool = new Pool(c.keyward.address, { connections: Math.max(CONNECTIONS, SETUP_CONNECTIONS) });
    try {
      const { forms, cookie } = await openForms(c, pool, WARMUP_FORMS + FORMS);
      await postForms(pool, forms.slice(0, WARMUP_FORMS), cookie);
      const cpu = await cpuMeter(c);
      const latencies = await postForms(pool, forms.slice(WARMUP_FORMS), cookie);
      const cost = await cpu(FORMS);
      const written = (WARMUP_FORMS + FORMS) * formCase.endpoints;
      const after = await outbox(c.ctx);
      if (after.messages !== written) throw new Error(`the outbox holds ${after.messages} messages, not ${written}`);
      let withDeliveries = '';
      if (formCase.answer !== 'hang' && formCase.endpoints > 0) {
        const postsEnded = Date.now();
        await until(async () => (await outbox(c.ctx)).delivered === written, 'the deliveries');
        const all = await cpu(FORMS);
        withDeliveries =
          `\n${''.padEnd(44)} with their deliveries (${after.delivered} of ${written} sent when the last POST was answered, ` +
          `the rest ${((Date.now() - postsEnded) / 1000).toFixed(1)} s later): Keyward ${micros(all.keywardMicros)}` +
          `${all.databaseMicros === null ? '' : `, PostgreSQL backends ${micros(all.databaseMicros)}`} CPU a form`;
      }
      console.log(
        `${`${engine}, ${formCase.name}`.padEnd(44)} p50 ${percentile(latencies, 0.5).toFixed(2)} ms   p99 ${percentile(latencies, 0.99).toFixed(2)} ms   ` +
          `Keyward ${micros(cost.keywardMicros).padStart(7)} CPU/POST` +
          `${cost.databaseMicros === null ? '' : `   PostgreSQL backends ${micros(cost.databaseMicros)}`}` +
          withDeliveries,
      );
      return cost;
    } finally {
      await pool.close();
    }
  });
}

// ---- 3. The API while a backlog drains ----

/** GETs `path` one at a time until `stop()` says so (checked after each); the latency of each, in ms. */
async function getUntil(pool: Pool, path: string, headers: Record<string, string>, stop: (done: number) => boolean): Promise<number[]> {
  const latencies: number[] = [];
  while (!stop(latencies.length)) {
    const began = performance.now();
    await send(pool, `GET ${path}`, { method: 'GET', path, headers }, 200);
    latencies.push(performance.now() - began);
  }
  return latencies.sort((a, b) => a - b);
}

/**
 * `GET /v1/end-users/{id}` (an end user with one credential, made through the hosted form) loaded
 * one request at a time: IDLE_READS while nothing is due, then while a backlog of READS_BACKLOG
 * messages to 10 endpoints drains (from the commit of the backlog to the last message delivered). The
 * aim: the draining p99 at most 1.5 times the idle one. Both are 10,000 unless told: a p99 over 3,000
 * GETs (the earlier default) is their 30 slowest, which one scheduler pause on a shared VM moves
 * across the line either way (bench/RESULTS.md).
 */
const IDLE_READS = Number(process.env.BENCH_IDLE_READS ?? 10_000);
const READS_BACKLOG = Number(process.env.BENCH_READS_BACKLOG ?? 10_000);
const WARMUP_READS = 1000;

async function readsWhileDraining(engine: Engine, databaseUrl: string, dir: string) {
  return withCase(databaseUrl, 10, { status: 204 }, join(dir, `reads-${engine}.log`), async (c) => {
    const pool = new Pool(c.keyward.address, { connections: SETUP_CONNECTIONS });
    try {
      const { forms, cookie } = await openForms(c, pool, 1);
      await postForms(pool, forms, cookie);
      // Warm the dispatcher's path too, and leave nothing due.
      await deliver(c, WARMUP_MESSAGES);
      const path = '/v1/end-users/form-user-0';
      await getUntil(pool, path, c.headers, (n) => n >= WARMUP_READS);
      const idleCpu = await cpuMeter(c);
      const idle = await getUntil(pool, path, c.headers, (n) => n >= IDLE_READS);
      const idleCost = await idleCpu(idle.length);
      const events = Math.ceil(READS_BACKLOG / c.secrets.length);
      const before = await outbox(c.ctx);
      const receivedBefore = await c.receiver.count();
      const expected = before.messages + events * c.secrets.length;
      await c.ctx.store.transaction(async () => {
        for (let i = 0; i < events; i++) await recordEvent(c.ctx, benchEvent(c.serverId, i));
      });
      const began = Date.now();
      let drained = false;
      // Counted by the receiver's thread until every message has arrived, and only then asked of the
      // database: a count over the outbox on this thread (synchronous on SQLite) every few ms would
      // hold the GETs' answers in this event loop and be measured as Keyward's latency.
      const watch = until(async () => (await c.receiver.count()) >= receivedBefore + events * c.secrets.length, 'the receiver')
        .then(() => until(async () => (await outbox(c.ctx)).delivered >= expected, 'the backlog'))
        .then(() => {
          drained = true;
        });
      const draining = await getUntil(pool, path, c.headers, () => drained);
      await watch;
      const seconds = (Date.now() - began) / 1000;
      const idleP99 = percentile(idle, 0.99);
      const drainingP99 = percentile(draining, 0.99);
      console.log(
        `${engine.padEnd(8)} GET /v1/end-users/{id}: idle p50 ${percentile(idle, 0.5).toFixed(2)} ms p99 ${idleP99.toFixed(2)} ms ` +
          `(Keyward ${micros(idleCost.keywardMicros)} CPU/GET); while ${events * c.secrets.length} messages to 10 endpoints drain ` +
          `(${seconds.toFixed(1)} s, ${((events * c.secrets.length) / seconds).toFixed(0)} deliveries/s, ${draining.length} GETs): ` +
          `p50 ${percentile(draining, 0.5).toFixed(2)} ms p99 ${drainingP99.toFixed(2)} ms; ratio ${(drainingP99 / idleP99).toFixed(2)} (aim ≤ 1.5)`,
      );
    } finally {
      await pool.close();
    }
  });
}

// ---- The run ----

const dir = mkdtempSync(join(tmpdir(), 'keyward-bench-'));
const postgres = ENGINES.includes('postgres') ? await benchPostgres() : null;
let databases = 0;
const databaseFor = async (engine: Engine) => (engine === 'postgres' ? postgres!.database() : `sqlite:${join(dir, `keyward-${++databases}.db`)}`);
console.log(
  `\nNode ${process.version}, KEYWARD_LOG_LEVEL=${LOG_LEVEL}; ${MESSAGES} messages a delivery run (after ${WARMUP_MESSAGES}); ` +
    `${FORMS} form POSTs a case (after ${WARMUP_FORMS}) on ${CONNECTIONS} connection(s); ${IDLE_READS} idle GETs, then GETs while ${READS_BACKLOG} messages drain\n`,
);
try {
  if (PARTS.includes('deliveries')) {
    console.log('Deliveries to a local receiver answering 204:');
    for (const engine of ENGINES) {
      for (const endpoints of [1, 10]) await deliveryRate(engine, await databaseFor(engine), endpoints, dir);
    }
  }
  if (PARTS.includes('reads')) {
    console.log('\nThe API while a backlog drains:');
    for (const engine of ENGINES) await readsWhileDraining(engine, await databaseFor(engine), dir);
  }
  if (PARTS.includes('forms')) console.log('\nThe hosted form POST (a new credential; one credential.connected a subscribed endpoint):');
  for (const engine of PARTS.includes('forms') ? ENGINES : []) {
    const costs: { keywardMicros: number }[] = [];
    for (const formCase of FORM_CASES) costs.push(await formCost(engine, await databaseFor(engine), formCase, dir));
    const extra = (i: number) => `${(costs[i]!.keywardMicros - costs[0]!.keywardMicros).toFixed(0)} µs`;
    console.log(`${''.padEnd(44)} the outbox write on ${engine}: Keyward +${extra(1)} CPU a POST for 1 endpoint, +${extra(2)} for 10\n`);
  }
} finally {
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
}
