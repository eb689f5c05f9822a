/**
 * The loads of the proxy benchmarks (bench/proxy.ts, bench/proxy-audience.ts): one contender (a way
 * of calling the upstream) loaded by autocannon for a while, with every answer's exact time, and the
 * CPU per request of the proxy's process and of the upstream's, read from /proc; and the account,
 * server, key and custom provider both call through.
 */
import type { EventEmitter } from 'node:events';
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { Pool } from 'undici';
import { CLI_ACTOR, type ServiceContext } from '../src/services/context.js';
import { createAccountKey } from '../src/services/keys/account-keys.js';
import { addCustomStaticProvider } from '../src/services/providers/custom-providers.js';
import { createServer } from '../src/services/servers/servers.js';
import { createAccount } from '../src/services/users/accounts.js';
import { cpuSeconds, type Started } from './processes.js';
import { monotonicMicros, type Windows } from './profile-top.js';

/** What the client saw of one load: requests answered, their rate, and exact latencies (ms). */
interface Load {
  requests: number;
  perSecond: number;
  p50: number;
  p99: number;
}

/** One load as the client saw it, and CPU per request of the proxy (null: called directly) and of the upstream. */
export interface Measured extends Load {
  proxyCpu: number | null;
  upstreamCpu: number;
}

const percentile = (sorted: Float64Array, p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

/**
 * How a contender is loaded: for `seconds`, on `connections`, each sending its next request as soon as
 * the last is answered (a closed loop: the proxy runs flat out, and a latency is mostly the queue its
 * CPU per request makes); or, with `rate`, an open loop: request i is due at i/rate seconds whatever
 * came back, on at most `connections` at once (a call that has to wait for a free one shows its wait).
 */
export interface LoadShape {
  seconds: number;
  connections: number;
  rate?: number;
}

/** p50 and p99 of latencies in ms. */
function latencies(times: number[]): Pick<Load, 'p50' | 'p99'> {
  const sorted = Float64Array.from(times).sort();
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

/**
 * The closed loop, by autocannon, failing on any non-2xx answer; every 2xx answer's time kept (in ms,
 * as autocannon measures it). With `pathOf`, each request's path is the next it answers (the URL's
 * origin kept). (autocannon's own `overallRate` is no open loop: each connection sends flat out until
 * its share of the second is used, then waits for the next second.)
 */
async function closedLoad(url: string, headers: Record<string, string>, { seconds, connections }: LoadShape, pathOf?: () => string): Promise<Load> {
  const times: number[] = [];
  const requests = pathOf ? [{ setupRequest: (request: autocannon.Request) => ({ ...request, path: pathOf() }) }] : undefined;
  // Without a callback autocannon returns its instance, an EventEmitter that is also a promise of the result.
  const tracker = autocannon({ url, headers, connections, duration: seconds, requests }) as Promise<autocannon.Result> & EventEmitter;
  tracker.on('response', (_client: unknown, status: number, _bytes: number, responseTime: number) => {
    if (status < 300) times.push(responseTime);
  });
  const result = await tracker;
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return { requests: result.requests.total, perSecond: result.requests.average, ...latencies(times) };
}

/** The open loop (see LoadShape), on an undici pool of `connections`; any non-2xx answer or error fails it. */
async function pacedLoad(
  url: string,
  headers: Record<string, string>,
  { seconds, connections, rate }: LoadShape & { rate: number },
  pathOf?: () => string,
): Promise<Load> {
  const { origin, pathname, search } = new URL(url);
  const pool = new Pool(origin, { connections, pipelining: 1 });
  const times: number[] = [];
  const calls: Promise<void>[] = [];
  let failure: unknown;
  const fail = (error: unknown) => {
    failure ??= error;
  };
  const total = Math.round(seconds * rate);
  const started = performance.now();
  // Timed from when it is issued, not from when it was due: the timer's own lateness (up to a
  // millisecond) is the load's, not the contender's. A wait for a free connection is counted.
  const call = async () => {
    const issued = performance.now();
    const { statusCode, body } = await pool.request({ method: 'GET', path: pathOf?.() ?? `${pathname}${search}`, headers });
    await body.dump();
    if (statusCode >= 300) throw new Error(`${url}: answered ${statusCode}`);
    times.push(performance.now() - issued);
  };
  try {
    for (let sent = 0; sent < total; ) {
      // Every request now due goes out; then the loop sleeps until the next is.
      const now = performance.now();
      for (; sent < total && started + (sent * 1000) / rate <= now; sent++) calls.push(call().catch(fail));
      if (sent < total) await sleep(Math.max(0, started + (sent * 1000) / rate - performance.now()));
    }
    await Promise.all(calls);
    if (failure) throw failure;
  } finally {
    await pool.close();
  }
  return { requests: total, perSecond: total / ((performance.now() - started) / 1000), ...latencies(times) };
}

/** A way of calling the upstream in the rounds: what it is called, where it answers, and every load of it. */
export interface Contender {
  name: string;
  /** The proxy's process; null when the client calls the upstream itself. */
  proxy: Started | null;
  url: string;
  headers: Record<string, string>;
  /** Each request's path, where the requests are not all the same (bench/proxy-audience.ts). */
  pathOf?: () => string;
  loads: Measured[];
  answered: number;
  windows: Windows;
}

export function contender(name: string, proxy: Started | null, url: string, headers: Record<string, string>, pathOf?: () => string): Contender {
  return { name, proxy, url, headers, pathOf, loads: [], answered: 0, windows: { spans: [], requests: 0 } };
}

export async function measureOnce(c: Contender, upstream: Started, shape: LoadShape, record = true): Promise<Measured> {
  const pid = c.proxy?.child.pid;
  const from = monotonicMicros();
  const [proxyBefore, upstreamBefore] = [pid ? cpuSeconds(pid) : 0, cpuSeconds(upstream.child.pid!)];
  const { rate } = shape;
  const load = rate ? await pacedLoad(c.url, c.headers, { ...shape, rate }, c.pathOf) : await closedLoad(c.url, c.headers, shape, c.pathOf);
  const { requests } = load;
  const measured: Measured = {
    ...load,
    proxyCpu: pid ? ((cpuSeconds(pid) - proxyBefore) * 1e6) / requests : null,
    upstreamCpu: ((cpuSeconds(upstream.child.pid!) - upstreamBefore) * 1e6) / requests,
  };
  c.answered += requests;
  if (record) {
    c.windows.spans.push({ from, to: monotonicMicros() });
    c.windows.requests += requests;
    c.loads.push(measured);
  }
  return measured;
}

export function meanOf(loads: Measured[]): Measured {
  const mean = (pick: (m: Measured) => number) => loads.reduce((sum, m) => sum + pick(m), 0) / loads.length;
  return {
    requests: mean((m) => m.requests),
    perSecond: mean((m) => m.perSecond),
    p50: mean((m) => m.p50),
    p99: mean((m) => m.p99),
    proxyCpu: loads[0]!.proxyCpu === null ? null : mean((m) => m.proxyCpu!),
    upstreamCpu: mean((m) => m.upstreamCpu),
  };
}

export const row = (name: string, m: Measured) =>
  `${name.padEnd(44)} ${m.perSecond.toFixed(0).padStart(6)} req/s   p50 ${m.p50.toFixed(2).padStart(5)} ms   p99 ${m.p99.toFixed(2).padStart(6)} ms   ` +
  `proxy ${m.proxyCpu === null ? '   —' : m.proxyCpu.toFixed(0).padStart(4)} µs CPU/req   upstream ${m.upstreamCpu.toFixed(0).padStart(3)} µs CPU/req`;

/** Keyward's CPU per request against the floor's, in each round measured: "2.10, 1.95, …". */
export const ratiosPerRound = (ours: Contender, floor: Contender) => ours.loads.map((k, i) => (k.proxyCpu! / floor.loads[i]!.proxyCpu!).toFixed(2)).join(', ');

/** The custom provider both benchmarks call through: the upstream as its API, its one field sent as a bearer token. */
export const PROVIDER = 'bench-upstream';

/** An account, its business-mode server with the custom provider, and the account's key: what the loads send. */
export async function benchServer(ctx: ServiceContext, name: string, upstreamUrl: string) {
  const { accountId } = await createAccount(ctx, { name, email: `${name.toLowerCase().replaceAll(' ', '-')}@example.test` });
  const { serverId, serverKey } = await createServer(ctx, { accountId, name, mode: 'business', actor: CLI_ACTOR });
  const { key } = await createAccountKey(ctx, { accountId, label: 'bench', actor: CLI_ACTOR });
  await addCustomStaticProvider(ctx, {
    serverId,
    slug: PROVIDER,
    name: 'Bench upstream',
    fields: [{ name: 'apiKey', label: 'API key', secret: true, required: true }],
    api: { apiBaseUrl: upstreamUrl, auth: 'bearer:apiKey' },
    actor: CLI_ACTOR,
  });
  return { accountId, serverId, headers: { authorization: `Bearer ${key}`, 'x-service-key': serverKey } };
}

/**
 * A warm-up of each contender (JIT, pools, the upstream's connections; not counted), then `rounds`
 * rounds loading each in turn, the order reversed every other round, each round printed with Keyward's
 * CPU per request against the floor's.
 */
export async function interleavedRounds(
  what: string,
  upstream: Started,
  all: Contender[],
  ours: Contender,
  floor: Contender,
  { seconds, rounds, connections }: { seconds: number; rounds: number; connections: number },
): Promise<void> {
  for (const c of all) await measureOnce(c, upstream, { seconds: 3, connections }, false);
  for (let round = 1; round <= rounds; round += 1) {
    const order = round % 2 === 1 ? all : [...all].reverse();
    for (const c of order) await measureOnce(c, upstream, { seconds, connections });
    const [k, f] = [ours.loads.at(-1)!, floor.loads.at(-1)!];
    console.log(`round ${round}/${rounds} (${what}, ${order === all ? 'in order' : 'reversed'}, load average ${loadavg()[0]!.toFixed(2)}):`);
    for (const c of all) console.log(`  ${row(c.name, c.loads.at(-1)!)}`);
    console.log(`  Keyward/floor by the proxy's CPU per request: ${(k.proxyCpu! / f.proxyCpu!).toFixed(2)}`);
  }
}
