/**
 * The audit trail at 1,000 and at 1,000,000 events, in one run (issue 20: "keyset pages, flat at a
 * million events"; "memory flat at a million events"): one database with an account of each size
 * (events written straight into the table, one a minute, by the owner, a developer and the CLI in
 * turn, four actions in turn), `keyward serve` as its own process, and for each account the Audit
 * page unfiltered, by user, by action, by both, and by a week, each from the first page and from the
 * middle of the trail. Prints per-request latency (p50/p99, one request at a time) and the 1M/1k
 * ratios; then `keyward audit export` of each account as its own process: time, events a second and
 * the process's peak RSS.
 *
 *   npm run bench:audit                         # SQLite
 *   BENCH_ENGINE=postgres npm run bench:audit   # an embedded PostgreSQL, or BENCH_DATABASE_URL's
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { Client } from 'undici';
import { loadConfig } from '../src/config.js';
import { openContext } from '../src/runtime.js';
import type { ServiceContext } from '../src/services/context.js';
import { createAccount } from '../src/services/users/accounts.js';
import { hashPassword } from '../src/services/users/passwords.js';
import { createSession } from '../src/services/users/sessions.js';
import type { Engine } from '../src/store/store.js';
import { benchPostgres, latency, startProcess } from './processes.js';

const ENGINE = (process.env.BENCH_ENGINE ?? 'sqlite') as Engine;
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 200);
const SIZES = [1_000, 1_000_000] as const;
const ACTIONS = ['account_key.created', 'account_key.revoked', 'webhook.added', 'server.created'];
const BASE = Date.UTC(2026, 0, 1);
/** Event i of an account happens at BASE + i minutes. */
const timeOf = (i: number) => new Date(BASE + i * 60_000).toISOString();
const eventId = (tag: string, i: number) => `evt_${tag}${i.toString(16).padStart(24, '0')}`;

if (ENGINE !== 'sqlite' && ENGINE !== 'postgres') throw new Error('BENCH_ENGINE is sqlite or postgres');

/** An account's trail of `size` events, straight into the table. */
async function fill(ctx: ServiceContext, accountId: string, tag: string, actors: string[], size: number) {
  const series =
    ENGINE === 'sqlite'
      ? sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${size}) select i from n`
      : sql`select i from generate_series(1, ${size}) as i`;
  const time =
    ENGINE === 'sqlite'
      ? sql`strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || i || ' minutes')`
      : sql`to_char(timestamp '2026-01-01' + i * interval '1 minute', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  const id = ENGINE === 'sqlite' ? sql`${`evt_${tag}`} || printf('%024x', i)` : sql`${`evt_${tag}`} || lpad(to_hex(i), 24, '0')`;
  const pick = (list: readonly string[]) =>
    sql`case ${sql.join(
      list.map((value, k) => sql`when i % ${list.length} = ${k} then ${value}`),
      sql` `,
    )} end`;
  await sql`insert into audit_events (id, account_id, server_id, actor, action, target_id, detail, created_at)
    select ${id}, ${accountId}, null, ${pick(actors)}, ${pick(ACTIONS)}, 'key_x', '{"label":"Billing","hint":"…abcd"}', ${time}
    from (${series}) as s`.execute(ctx.store.db);
}

async function seed(env: Record<string, string>) {
  const { ctx } = await openContext(loadConfig(env));
  try {
    const accounts = [];
    for (const [n, size] of SIZES.entries()) {
      const { accountId, userId } = await createAccount(ctx, { name: `${size} events`, email: `owner${n}@bench.example`, password: 'bench-password-123' });
      const developerId = `usr_${String(n).padStart(28, '0')}`;
      await ctx.store.accounts.addUser({
        id: developerId,
        account_id: accountId,
        email: `dev${n}@bench.example`,
        password_hash: await hashPassword('bench-password-123'),
        created_at: timeOf(0),
        role: 'developer',
        last_sign_in_at: null,
      });
      const tag = `${n}000`;
      const started = Date.now();
      await fill(ctx, accountId, tag, [`user:${userId}`, `user:${developerId}`, 'cli'], size);
      console.log(`filled the ${size.toLocaleString('en')}-event account in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      const token = await createSession(ctx, userId, { userAgent: 'bench', address: '127.0.0.1' });
      const middle = size / 2;
      accounts.push({
        size,
        accountId,
        headers: { cookie: `keyward_session=${token}` },
        developer: `user:${developerId}`,
        middle: encodeURIComponent(`${timeOf(middle)}~${eventId(tag, middle)}`),
        // A week in the middle of the 1k trail's span (it lasts ~17 h: the whole of it) and of the 1M's.
        week: { from: timeOf(middle).slice(0, 10), to: new Date(Date.parse(timeOf(middle)) + 6 * 86_400_000).toISOString().slice(0, 10) },
      });
    }
    await (ENGINE === 'postgres' ? sql`vacuum analyze` : sql`analyze`).execute(ctx.store.db);
    return accounts;
  } finally {
    await ctx.store.close();
  }
}

/** A page's latency, and how many events it showed (its table's rows, the header's less). */
async function pageLatency(client: Client, path: string, headers: Record<string, string>, count: number) {
  const { p50, p99, body } = await latency(client, path, headers, count);
  return { p50, p99, rows: (body.match(/<tr>/g) ?? []).length - 1 };
}

/** Runs `keyward audit export` with its output thrown away; its time and peak RSS (VmHWM, read until it exits). */
async function exportRun(env: Record<string, string>, accountId: string, since: string | null) {
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, ['bin/keyward.js', 'audit', 'export', '--account', accountId, ...(since ? ['--since', since] : [])], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let lines = 0;
  child.stdout.on('data', (chunk: Buffer) => {
    for (const byte of chunk) if (byte === 10) lines++;
  });
  // bin/keyward.js makes the process spawned here a Node started with the export's flags (execve);
  // on a Node without execve the export is that process's child instead, so the larger peak is the export's.
  let peak = 0;
  const hwm = (pid: number | string) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  const sample = setInterval(() => {
    try {
      for (const pid of [child.pid!, ...readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').split(' ').filter(Boolean)]) {
        peak = Math.max(peak, hwm(pid));
      }
    } catch {
      // Exited between two samples.
    }
  }, 5);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearInterval(sample);
  if (code !== 0) throw new Error(`audit export exited ${code}`);
  return { seconds: Number(process.hrtime.bigint() - started) / 1e9, lines, peakMiB: peak };
}

const dir = mkdtempSync(join(tmpdir(), 'keyward-bench-audit-'));
const postgres = ENGINE === 'postgres' ? await benchPostgres() : null;
try {
  const env = {
    KEYWARD_DATABASE_URL: postgres ? await postgres.database() : `sqlite:${join(dir, 'keyward.db')}`,
    KEYWARD_MASTER_KEY: randomBytes(32).toString('base64'),
    KEYWARD_LOG_LEVEL: process.env.KEYWARD_LOG_LEVEL ?? 'info',
  };
  const accounts = await seed(env);
  const keyward = await startProcess(['bin/keyward.js', 'serve'], env, join(dir, 'keyward.log'), '/healthz');
  const client = new Client(keyward.address, { pipelining: 1 });
  try {
    const ms = (n: number) => n.toFixed(2).padStart(7);
    const filters = (a: (typeof accounts)[number]) => [
      ['no filter', ''],
      ['user', `user=${encodeURIComponent(a.developer)}`],
      ['action', 'action=webhook.added'],
      ['user and action', `user=${encodeURIComponent(a.developer)}&action=webhook.added`],
      ['a week', `from=${a.week.from}&to=${a.week.to}`],
    ];
    console.log(`\n${ENGINE}, Node ${process.version}; latency: ${REQUESTS} requests one at a time, after 20 unmeasured\n`);
    console.log('filter             page   rows |   1k p50     p99 |   1M p50     p99 | 1M/1k p50');
    for (const [k, [name]] of filters(accounts[0]!).entries()) {
      for (const page of ['first', 'deep'] as const) {
        const measured = [];
        for (const account of accounts) {
          const query = filters(account)[k]![1]!;
          const path = `/dashboard/audit?${query}${page === 'deep' ? `${query ? '&' : ''}before=${account.middle}` : ''}`;
          await pageLatency(client, path, account.headers, 20);
          measured.push(await pageLatency(client, path, account.headers, REQUESTS));
        }
        const [small, large] = measured as [(typeof measured)[0], (typeof measured)[0]];
        console.log(
          `${name!.padEnd(18)} ${page.padEnd(5)} ${String(large.rows).padStart(5)} | ${ms(small.p50)} ${ms(small.p99)} | ${ms(large.p50)} ${ms(large.p99)} | ${(large.p50 / small.p50).toFixed(2).padStart(8)}×`,
        );
      }
    }
  } finally {
    await client.close();
    await keyward.stop();
  }
  // The 1k account whole, then the newest 1k, 10k, 100k, 300k and all of the 1M account's events:
  // whether the peak keeps growing with what is exported, or settles.
  console.log('\naudit export (its own process, output read and thrown away)');
  console.log('account     events     seconds   events/s  peak RSS');
  const [small, large] = accounts as [(typeof accounts)[0], (typeof accounts)[0]];
  const runs: [(typeof accounts)[0], number][] = [
    [small, small.size],
    ...[1_000, 10_000, 100_000, 300_000, large.size].map((n) => [large, n] as [(typeof accounts)[0], number]),
  ];
  for (const [account, count] of runs) {
    const run = await exportRun(env, account.accountId, count === account.size ? null : timeOf(account.size - count + 1));
    if (run.lines !== count) throw new Error(`exported ${run.lines} lines of ${count}`);
    console.log(
      `${account.size === small.size ? '1k' : '1M'}      ${count.toLocaleString('en').padStart(9)} ${run.seconds.toFixed(2).padStart(10)} ${Math.round(
        run.lines / run.seconds,
      )
        .toLocaleString('en')
        .padStart(10)} ${run.peakMiB.toFixed(1).padStart(7)} MiB`,
    );
  }
} finally {
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
}
