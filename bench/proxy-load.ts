/**
 * The loads of the proxy benchmarks (bench/proxy.ts, bench/proxy-audience.ts): one contender (a way
 * of calling the upstream) loaded by autocannon for a while, with every answer's exact time, and the
 * CPU per request of the proxy's process and of the upstream's, read from /proc; and the account,
 * server, key and custom provider both call through.
 */
import type { EventEmitter } from 'node:events';
import { loadavg } from 'node:os';
import autocannon from 'autocannon';
import { CLI_ACTOR, type ServiceContext } from '../src/services/context.js';
import { createAccountKey } from '../src/services/keys/account-keys.js';
import { addCustomStaticProvider } from '../src/services/providers/custom-providers.js';
import { createServer } from '../src/services/servers/servers.js';
import { createAccount } from '../src/services/users/accounts.js';
import { cpuSeconds, type Started } from './processes.js';
import { monotonicMicros, type Windows } from './profile-top.js';

/** One load: the client's result, exact latencies, and CPU per request of the proxy (null: called directly) and of the upstream. */
export interface Measured {
  requests: number;
  perSecond: number;
  p50: number;
  p99: number;
  proxyCpu: number | null;
  upstreamCpu: number;
}

const percentile = (sorted: Float64Array, p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

/**
 * Loads `url`, failing on any non-2xx answer; every 2xx answer's time kept (in ms, as autocannon
 * measures it). With `pathOf`, each request's path is the next it answers (the URL's origin kept).
 */
async function timedLoad(url: string, headers: Record<string, string>, seconds: number, connections: number, pathOf?: () => string) {
  const times: number[] = [];
  const requests = pathOf ? [{ setupRequest: (request: autocannon.Request) => ({ ...request, path: pathOf() }) }] : undefined;
  // Without a callback autocannon returns its instance, an EventEmitter that is also a promise of the result.
  const tracker = autocannon({ url, headers, connections, duration: seconds, requests }) as Promise<autocannon.Result> & EventEmitter;
  tracker.on('response', (_client: unknown, status: number, _bytes: number, responseTime: number) => {
    if (status < 300) times.push(responseTime);
  });
  const result = await tracker;
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  const sorted = Float64Array.from(times).sort();
  return { result, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
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

export async function measureOnce(c: Contender, upstream: Started, seconds: number, connections: number, record = true): Promise<Measured> {
  const pid = c.proxy?.child.pid;
  const from = monotonicMicros();
  const [proxyBefore, upstreamBefore] = [pid ? cpuSeconds(pid) : 0, cpuSeconds(upstream.child.pid!)];
  const { result, p50, p99 } = await timedLoad(c.url, c.headers, seconds, connections, c.pathOf);
  const requests = result.requests.total;
  const measured: Measured = {
    requests,
    perSecond: result.requests.average,
    p50,
    p99,
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
  for (const c of all) await measureOnce(c, upstream, 3, connections, false);
  for (let round = 1; round <= rounds; round += 1) {
    const order = round % 2 === 1 ? all : [...all].reverse();
    for (const c of order) await measureOnce(c, upstream, seconds, connections);
    const [k, f] = [ours.loads.at(-1)!, floor.loads.at(-1)!];
    console.log(`round ${round}/${rounds} (${what}, ${order === all ? 'in order' : 'reversed'}, load average ${loadavg()[0]!.toFixed(2)}):`);
    for (const c of all) console.log(`  ${row(c.name, c.loads.at(-1)!)}`);
    console.log(`  Keyward/floor by the proxy's CPU per request: ${(k.proxyCpu! / f.proxyCpu!).toFixed(2)}`);
  }
}
