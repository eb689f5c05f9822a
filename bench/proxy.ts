/**
 * The gateway's proxy (CONTRACT 8.1) on each engine: a local provider API (bench/proxy-upstream.ts, a
 * node:http server in its own process answering 267 bytes of JSON) loaded three ways in interleaved
 * rounds on the same machine:
 *
 * - directly, by the load client;
 * - through Keyward: `GET /v1/end-users/{id}/proxy/bench-upstream/v1/small` with both keys, the member's
 *   static credential of a custom provider (`apiBaseUrl` the upstream, `auth: bearer:apiKey`) read
 *   and injected per call (on SQLite the read and its opened secret are kept while nothing is committed:
 *   store/reads-until-change.ts; the bench has one end user, so nearly every call finds them kept),
 *   `keyward serve` in its default configuration (log level info: the request line and the 'proxied
 *   call' line);
 * - through the floor (bench/proxy-floor.ts): Fastify + undici, a Map lookup of a fixed token and the
 *   request forwarded with `Authorization: Bearer <token>`, the answer streamed back.
 *
 * For each it prints requests per second, p50/p99 latency (from every response's own time, to the
 * hundredth of a ms; autocannon's histogram has whole ms), and CPU per request of the proxy process
 * and of the upstream, from /proc: the proxy's CPU per request is what a proxied call adds (the
 * upstream's own is the same in all three). Then the aims: Keyward's added CPU at most twice the
 * floor's, and at most 150 µs on SQLite; Keyward's added p50 (its p50 minus the direct one) at most
 * 1 ms at BENCH_CONNECTIONS (10), read twice: in the rounds, where each connection sends its next
 * request as soon as the last is answered (the proxy runs flat out, and a p50 is mostly the queue its
 * CPU per request makes), and in an open loop on as many connections: BENCH_PACED_RATE (1,000)
 * requests a second, each sent when due and timed from then (proxy-load.ts), a rate every contender
 * keeps up with. A short load at one connection follows
 * too, for the latency a call adds when nothing queues.
 *
 * Then memory, on Keyward and the floor after the rounds (and after one unmeasured 64 MiB download):
 * a 200 MiB download read through the proxy as fast as it comes, a download read slowly (BENCH_SLOW_MIB
 * at BENCH_SLOW_MIB_PER_SECOND: 64 MiB at 16 MiB/s), and a 10 MiB upload (the upstream reads and discards it); the proxy's RSS before and its peak during each
 * (VmRSS sampled every 10 ms, and VmHWM after resetting it through /proc/<pid>/clear_refs where the
 * kernel lets us), against the aim of at most 32 MiB more.
 *
 *   npm run bench:proxy                        # both engines, 3 rounds of 10 s
 *   BENCH_SECONDS=6 BENCH_ROUNDS=3 BENCH_ENGINES=sqlite npm run bench:proxy
 *   BENCH_PROFILE_DIR=/tmp/profile npm run bench:proxy   # V8 CPU profiles of Keyward and the floor, and their top functions
 *   BENCH_PARTS=memory BENCH_DOWNLOAD_MIB=1000 npm run bench:proxy   # the memory cases only (BENCH_PARTS=load: the loads only)
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { loadConfig } from '../src/config.js';
import { openContext } from '../src/runtime.js';
import { CLI_ACTOR } from '../src/services/context.js';
import { storeCredential } from '../src/services/credentials/credentials.js';
import type { Engine } from '../src/store/store.js';
import { benchPostgres, type Started, startProcess } from './processes.js';
import { type CpuProfile, type Profiled, takeProfile, topFunctions } from './profile-top.js';
import { benchServer, type Contender, contender, interleavedRounds, type Measured, meanOf, measureOnce, PROVIDER, ratiosPerRound, row } from './proxy-load.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PROFILE_DIR = process.env.BENCH_PROFILE_DIR;
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
/** The open loop's rate: under half of what Keyward answers flat out here (2,000–3,700 a second). */
const PACED_RATE = Number(process.env.BENCH_PACED_RATE ?? 1000);
const LOG_LEVEL = process.env.KEYWARD_LOG_LEVEL ?? 'info';
const ENGINES = (process.env.BENCH_ENGINES ?? 'sqlite,postgres').split(',') as Engine[];
const DOWNLOAD_MIB = Number(process.env.BENCH_DOWNLOAD_MIB ?? 200);
const UPLOAD_MIB = Number(process.env.BENCH_UPLOAD_MIB ?? 10);
const WARM_MIB = 64;
const SLOW_MIB = Number(process.env.BENCH_SLOW_MIB ?? 64);
const SLOW_MIB_PER_SECOND = Number(process.env.BENCH_SLOW_MIB_PER_SECOND ?? 16);
/** Which parts run: the loads (CPU and latency) and the memory cases; both unless told. */
const PARTS = (process.env.BENCH_PARTS ?? 'load,memory').split(',');
const MEMBER = 'auth0|bench-user';
const MiB = 1024 * 1024;
/** The aims. */
const MAX_CPU_RATIO = 2;
const MAX_SQLITE_CPU_MICROS = 150;
const MAX_ADDED_P50_MS = 1;
const MAX_RSS_GROWTH_MIB = 32;

async function seed(env: Record<string, string>, upstreamUrl: string, token: string) {
  const { ctx } = await openContext(loadConfig(env));
  const { accountId, serverId, headers } = await benchServer(ctx, 'Bench', upstreamUrl);
  await storeCredential(ctx, {
    accountId,
    serverId,
    externalUserId: MEMBER,
    provider: PROVIDER,
    secret: { type: 'static', values: { apiKey: token } },
    actor: CLI_ACTOR,
    now: new Date().toISOString(),
  });
  await ctx.store.close();
  return headers;
}

/** The body each way answers: Keyward's and the floor's must be the upstream's own, byte for byte. */
async function sameAnswer(direct: Contender, through: Contender[]) {
  const answers = await Promise.all([direct, ...through].map((c) => fetch(c.url, { headers: c.headers })));
  const bodies = await Promise.all(answers.map((a) => a.text()));
  for (const [i, c] of [direct, ...through].entries()) {
    if (answers[i]!.status !== 200) throw new Error(`${c.name} answered ${answers[i]!.status}: ${bodies[i]}`);
    if (bodies[i] !== bodies[0]) throw new Error(`${c.name}'s body differs from the upstream's direct answer:\n  ${bodies[i]}\n  ${bodies[0]}`);
  }
  const upstreamHeader = answers[1]!.headers.get('keyward-upstream');
  if (!upstreamHeader) throw new Error("Keyward's answer has no keyward-upstream header");
  console.log(
    `checked: Keyward's and the floor's answers are the upstream's body (${bodies[0]!.length} bytes), byte for byte; keyward-upstream: ${upstreamHeader}`,
  );
}

// --- Memory ------------------------------------------------------------------------------------

function statusKiB(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) : NaN;
}

/** Resets the kernel's peak RSS of a process (VmHWM), where it lets us: "5" to clear_refs (proc(5)). */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** Runs `work` while watching a process's RSS: before, and the peak during (sampled, and the kernel's mark where it could be reset). */
async function watchRss<T>(pid: number, work: () => Promise<T>) {
  const before = statusKiB(pid, 'VmRSS');
  const kernelPeak = resetPeak(pid);
  let peak = before;
  const timer = setInterval(() => {
    peak = Math.max(peak, statusKiB(pid, 'VmRSS'));
  }, 10);
  const started = performance.now();
  let value: T;
  try {
    value = await work();
  } finally {
    clearInterval(timer);
  }
  peak = Math.max(peak, statusKiB(pid, 'VmRSS'), kernelPeak ? statusKiB(pid, 'VmHWM') : 0);
  return { value, seconds: (performance.now() - started) / 1000, beforeMiB: before / 1024, peakMiB: peak / 1024, kernelPeak };
}

/** A request through a proxy by node:http: the answer's status and the response to read. */
function send(url: string, headers: Record<string, string>, method = 'GET', body?: Readable, length?: number): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest(
      url,
      { method, headers: { ...headers, ...(length !== undefined ? { 'content-type': 'application/octet-stream', 'content-length': String(length) } : {}) } },
      resolve,
    );
    sent.on('error', reject);
    if (body) body.pipe(sent);
    else sent.end();
  });
}

/** Reads an answer to its end, as fast as it comes or at most `bytesPerSecond`; its size. */
async function drain(answer: IncomingMessage, bytesPerSecond?: number): Promise<number> {
  if (answer.statusCode !== 200) throw new Error(`answered ${answer.statusCode}`);
  const started = performance.now();
  let bytes = 0;
  for await (const chunk of answer) {
    bytes += (chunk as Buffer).byteLength;
    if (bytesPerSecond) {
      const due = started + (bytes / bytesPerSecond) * 1000;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
  return bytes;
}

/** `mib` MiB of a repeated 64 KiB chunk, made as the request reads it. */
function uploadBody(mib: number): Readable {
  const chunk = Buffer.alloc(64 * 1024, 0x62);
  let left = mib * MiB;
  return new Readable({
    read() {
      if (left <= 0) {
        this.push(null);
        return;
      }
      const part = left >= chunk.byteLength ? chunk : chunk.subarray(0, left);
      left -= part.byteLength;
      this.push(part);
    },
  });
}

interface MemoryCase {
  name: string;
  growth: number;
  line: string;
}

async function memory(label: string, proxy: Started, base: string, headers: Record<string, string>): Promise<MemoryCase[]> {
  const pid = proxy.child.pid!;
  const cases: MemoryCase[] = [];
  const report = (name: string, watched: Awaited<ReturnType<typeof watchRss>>, bytes: number) => {
    const growth = watched.peakMiB - watched.beforeMiB;
    const line =
      `${`${label}: ${name}`.padEnd(52)} RSS ${watched.beforeMiB.toFixed(0).padStart(4)} MiB before, peak ${watched.peakMiB.toFixed(0).padStart(4)} MiB, ` +
      `+${growth.toFixed(1).padStart(5)} MiB   (${(bytes / MiB).toFixed(0)} MiB in ${watched.seconds.toFixed(1)} s, ${(bytes / MiB / watched.seconds).toFixed(0)} MiB/s)`;
    console.log(line);
    cases.push({ name, growth, line });
  };
  // One download first, not measured: a process's heap and allocator reach their working size on the
  // first large body, whatever its size, and that is not the body held.
  await drain(await send(`${base}/download?mib=${WARM_MIB}`, headers));
  const download = await watchRss(pid, async () => drain(await send(`${base}/download?mib=${DOWNLOAD_MIB}`, headers)));
  if (download.value !== DOWNLOAD_MIB * MiB) throw new Error(`${label}: the download brought ${download.value} bytes`);
  report(`${DOWNLOAD_MIB} MiB download, read as it comes`, download, download.value);
  const slow = await watchRss(pid, async () => drain(await send(`${base}/download?mib=${SLOW_MIB}`, headers), SLOW_MIB_PER_SECOND * MiB));
  if (slow.value !== SLOW_MIB * MiB) throw new Error(`${label}: the slow download brought ${slow.value} bytes`);
  report(`${SLOW_MIB} MiB download, read at ${SLOW_MIB_PER_SECOND} MiB/s`, slow, slow.value);
  const up = await watchRss(pid, async () => {
    const answer = await send(`${base}/upload`, headers, 'POST', uploadBody(UPLOAD_MIB), UPLOAD_MIB * MiB);
    const parts: Buffer[] = [];
    for await (const chunk of answer) parts.push(chunk as Buffer);
    if (answer.statusCode !== 200) throw new Error(`${label}: the upload was answered ${answer.statusCode}: ${Buffer.concat(parts)}`);
    return (JSON.parse(Buffer.concat(parts).toString()) as { received: number }).received;
  });
  if (up.value !== UPLOAD_MIB * MiB) throw new Error(`${label}: the upstream received ${up.value} bytes of the upload`);
  report(`${UPLOAD_MIB} MiB upload`, up, up.value);
  if (!download.kernelPeak) console.log(`  (${label}: the kernel's peak could not be reset; the peak is VmRSS sampled every 10 ms)`);
  return cases;
}

// --- Profiles ----------------------------------------------------------------------------------

function profileOf(label: string, c: Contender): Profiled | null {
  return !PROFILE_DIR || !c.proxy ? null : takeProfile(PROFILE_DIR, label, c.proxy.child.pid!, c.answered, c.windows);
}

// --- The run -----------------------------------------------------------------------------------

const verdict = (met: boolean) => (met ? 'met' : 'MISSED');

/** The interleaved rounds at CONNECTIONS, one load at one connection, and the CPU and latency aims. */
async function rounds(engine: Engine, upstream: Started, direct: Contender, ours: Contender, floors: Contender, say: (line: string) => void) {
  const all = [direct, ours, floors];
  await interleavedRounds(engine, upstream, all, ours, floors, { seconds: SECONDS, rounds: ROUNDS, connections: CONNECTIONS });
  const [d, o, f] = all.map((c) => meanOf(c.loads)) as [Measured, Measured, Measured];
  // One connection: nothing queues, so a p50 is a call's own latency.
  const single = [];
  for (const c of all) single.push(await measureOnce(c, upstream, { seconds: Math.min(SECONDS, 5), connections: 1 }, false));
  // The same connections, the requests sent at a steady pace every contender keeps up with (an open loop).
  const paced = [];
  for (const c of all) paced.push(await measureOnce(c, upstream, { seconds: Math.min(SECONDS, 5), connections: CONNECTIONS, rate: PACED_RATE }, false));
  say(`\nsummary on ${engine}, the mean of ${ROUNDS} round(s) at ${CONNECTIONS} connections:`);
  say(row(direct.name, d));
  say(row(ours.name, o));
  say(row(floors.name, f));
  say(
    `at 1 connection (${Math.min(SECONDS, 5)} s each, once): p50 direct ${single[0]!.p50.toFixed(2)} ms, Keyward ${single[1]!.p50.toFixed(2)} ms, floor ${single[2]!.p50.toFixed(2)} ms`,
  );
  const cpuRatio = o.proxyCpu! / f.proxyCpu!;
  say(
    `aim: Keyward's added CPU ≤ ${MAX_CPU_RATIO}× the floor's: ${o.proxyCpu!.toFixed(0)} µs against ${f.proxyCpu!.toFixed(0)} µs, ` +
      `${cpuRatio.toFixed(2)}× (per round ${ratiosPerRound(ours, floors)}): ${verdict(cpuRatio <= MAX_CPU_RATIO)}`,
  );
  if (engine === 'sqlite') {
    say(`aim: Keyward's added CPU ≤ ${MAX_SQLITE_CPU_MICROS} µs on SQLite: ${o.proxyCpu!.toFixed(0)} µs: ${verdict(o.proxyCpu! <= MAX_SQLITE_CPU_MICROS)}`);
  }
  const addedP50 = o.p50 - d.p50;
  say(
    `aim: Keyward's added p50 ≤ ${MAX_ADDED_P50_MS} ms at ${CONNECTIONS} connections: ${o.p50.toFixed(2)} − ${d.p50.toFixed(2)} = ${addedP50.toFixed(2)} ms ` +
      `(the floor's: ${(f.p50 - d.p50).toFixed(2)} ms): ${verdict(addedP50 <= MAX_ADDED_P50_MS)}`,
  );
  const [pd, po, pf] = paced as [Measured, Measured, Measured];
  const pacedAdded = po.p50 - pd.p50;
  say(
    `aim, at ${CONNECTIONS} connections paced at ${PACED_RATE} requests a second (open loop; ${paced.map((m) => m.perSecond.toFixed(0)).join(', ')} answered a second): ` +
      `Keyward's added p50 ≤ ${MAX_ADDED_P50_MS} ms: ${po.p50.toFixed(2)} − ${pd.p50.toFixed(2)} = ${pacedAdded.toFixed(2)} ms ` +
      `(the floor's: ${(pf.p50 - pd.p50).toFixed(2)} ms): ${verdict(pacedAdded <= MAX_ADDED_P50_MS)}`,
  );
}

async function compare(engine: Engine, databaseUrl: string, dir: string): Promise<{ profiles: Profiled[]; summary: string[] }> {
  const token = `sk-bench-${randomBytes(16).toString('hex')}`;
  const profile = PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [];
  // Run by Node itself (type stripping), not through tsx: no loader in the process.
  const upstream = await startProcess(['bench/proxy-upstream.ts'], { UPSTREAM_TOKEN: token }, join(dir, `upstream-${engine}.log`), '/ready');
  const started: Started[] = [upstream];
  let stopped = false;
  try {
    const env = {
      KEYWARD_DATABASE_URL: databaseUrl,
      KEYWARD_MASTER_KEY: randomBytes(32).toString('base64'),
      KEYWARD_LOG_LEVEL: LOG_LEVEL,
      // The benchmark sends far more than the default 6,000 requests a minute on one key.
      KEYWARD_RATE_LIMIT_PER_MINUTE: '10000000',
      // The upstream is on 127.0.0.1.
      KEYWARD_ALLOW_PRIVATE_URLS: 'true',
      KEYWARD_PROXY_MAX_BODY_MB: String(Math.max(16, UPLOAD_MIB + 1)),
    };
    const headers = await seed(env, upstream.address, token);
    const keyward = await startProcess([...profile, 'bin/keyward.js', 'serve'], env, join(dir, `keyward-${engine}.log`), '/healthz');
    started.push(keyward);
    const floor = await startProcess(
      [...profile, 'bench/proxy-floor.ts'],
      { FLOOR_UPSTREAM_URL: upstream.address, FLOOR_MEMBER: MEMBER, FLOOR_PROVIDER: PROVIDER, FLOOR_TOKEN: token },
      join(dir, `floor-proxy-${engine}.log`),
      '/ready',
    );
    started.push(floor);
    const path = `/v1/end-users/${encodeURIComponent(MEMBER)}/proxy/${PROVIDER}`;
    const direct = contender(`upstream called directly (${engine})`, null, `${upstream.address}/v1/small`, {});
    const ours = contender(`through Keyward's proxy (${engine})`, keyward, `${keyward.address}${path}/v1/small`, headers);
    const floors = contender('through the floor (bench/proxy-floor.ts)', floor, `${floor.address}${path}/v1/small`, headers);
    await sameAnswer(direct, [ours, floors]);
    const summary: string[] = [];
    const say = (line: string) => {
      console.log(line);
      summary.push(line);
    };
    if (PARTS.includes('load')) await rounds(engine, upstream, direct, ours, floors, say);
    if (PARTS.includes('memory')) {
      say(`memory on ${engine} (aim: Keyward's RSS at most ${MAX_RSS_GROWTH_MIB} MiB more than before, each; the floor's for comparison):`);
      const cases = [
        ...(await memory(`Keyward (${engine})`, keyward, `${keyward.address}${path}`, headers)),
        ...(await memory('floor', floor, `${floor.address}${path}`, headers)),
      ];
      for (const m of cases) summary.push(m.line);
      for (const m of cases.filter((c) => c.line.startsWith('Keyward'))) {
        say(`aim: Keyward's RSS growth ≤ ${MAX_RSS_GROWTH_MIB} MiB, ${m.name}: +${m.growth.toFixed(1)} MiB: ${verdict(m.growth <= MAX_RSS_GROWTH_MIB)}`);
      }
    }
    await Promise.all(started.map((s) => s.stop()));
    stopped = true;
    const profiles = [profileOf(`keyward-proxy-${engine}`, ours), profileOf(`floor-proxy-${engine}`, floors)].filter((p) => p !== null);
    return { profiles, summary };
  } finally {
    if (!stopped) await Promise.all(started.map((s) => s.stop()));
  }
}

const dir = mkdtempSync(join(tmpdir(), 'keyward-bench-'));
const postgres = ENGINES.includes('postgres') ? await benchPostgres() : null;
console.log(
  `\n${CONNECTIONS} connections, ${SECONDS} s each, ${ROUNDS} round(s), Node ${process.version}, KEYWARD_LOG_LEVEL=${LOG_LEVEL}, load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}\n`,
);
const profiles: Profiled[] = [];
const summaries: string[] = [];
try {
  for (const engine of ENGINES) {
    const { profiles: p, summary } = await compare(engine, engine === 'postgres' ? await postgres!.database() : `sqlite:${join(dir, 'keyward.db')}`, dir);
    profiles.push(...p);
    summaries.push(...summary);
  }
} finally {
  await postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
}
for (const { label, file, answered, windows } of profiles) {
  console.log(`\n${label}: ${file} (${answered} requests answered in all, ${windows.requests} in the measured loads)`);
  console.log(topFunctions(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, answered, 15, windows).join('\n'));
}
if (ENGINES.length > 1) console.log(`\nall summaries again:${summaries.join('\n')}`);
console.log(
  `\nload average at the end ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
