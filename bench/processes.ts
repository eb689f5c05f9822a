/**
 * What the benchmarks share: real server processes on free ports, their logs in files, a PostgreSQL
 * server when one is needed, and autocannon runs that fail loudly on any non-2xx answer.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import type { Client } from 'undici';
import { createPostgresDatabase, freePort, startEmbeddedPostgres } from '../test/helpers/embedded-postgres.js';

/**
 * Starts a server process on a free port, its output going to a file as a service's log would
 * (reading it through a pipe here would make the two processes wait on each other), and resolves
 * once `readyPath` answers 200.
 */
export async function startProcess(command: string[], env: Record<string, string>, logFile: string, readyPath: string) {
  const port = await freePort();
  const log = openSync(logFile, 'w');
  const child = spawn(process.execPath, command, {
    env: { ...process.env, ...env, PORT: String(port), KEYWARD_PORT: String(port) },
    stdio: ['ignore', log, 'inherit'],
  });
  closeSync(log);
  const address = `http://127.0.0.1:${port}`;
  for (let waited = 0; waited < 60_000 && child.exitCode === null; waited += 100) {
    const ready = await fetch(address + readyPath).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) {
      const stop = () => {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        return exited;
      };
      return { child, address, stop };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`${command.join(' ')} did not start; see ${logFile}`);
}

export type Started = Awaited<ReturnType<typeof startProcess>>;

/**
 * CPU time a process has used so far, in seconds (Linux, /proc; clock ticks of 1/100 s). Divided by
 * the requests of a load, it gives a server's own cost per request, which, unlike requests per
 * second, does not move with whatever else the machine is doing.
 */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // After the command name: state is field 3, utime 14 and stime 15 (1-based, see proc(5)).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Loads `url` and says what it cost the server that answered: requests per second and CPU µs per request. */
export async function measure(server: Started, url: string, headers: Record<string, string>, seconds: number, connections: number) {
  const before = cpuSeconds(server.child.pid!);
  const result = await load(url, headers, seconds, connections);
  const cpuMicros = ((cpuSeconds(server.child.pid!) - before) * 1e6) / result.requests.total;
  return { result, cpuMicros };
}

export async function load(url: string, headers: Record<string, string>, seconds: number, connections: number) {
  const result = await autocannon({ url, headers, connections, duration: seconds });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return result;
}

/**
 * A PostgreSQL server for a benchmark: BENCH_DATABASE_URL's (an admin connection string) or an
 * embedded one started here. `database()` makes a fresh database in it and returns its URL; `stop`
 * drops those databases and stops the embedded server.
 */
export async function benchPostgres() {
  const given = process.env.BENCH_DATABASE_URL;
  const server = given ? { adminUrl: given, stop: async () => undefined } : await startEmbeddedPostgres();
  const made: (() => Promise<void>)[] = [];
  return {
    async database(): Promise<string> {
      const { url, drop } = await createPostgresDatabase(server.adminUrl, 'keyward_bench');
      made.push(drop);
      return url;
    },
    async stop() {
      for (const drop of made) await drop();
      await server.stop();
    },
  };
}

/** Per-request latency: `count` GETs one after another on one keep-alive connection, in ms, failing on any non-200; and the last answer's body. */
export async function latency(client: Client, path: string, headers: Record<string, string>, count: number) {
  const times: number[] = [];
  let body = '';
  for (let i = 0; i < count; i++) {
    const started = process.hrtime.bigint();
    const response = await client.request({ path, method: 'GET', headers });
    body = await response.body.text();
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
    if (response.statusCode !== 200) throw new Error(`${path}: ${response.statusCode} ${body.slice(0, 300)}`);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
  return { p50: at(0.5), p99: at(0.99), body };
}

/** The peak resident memory of a process so far, in MiB (Linux: the kernel keeps the high-water mark). */
export function peakRssMiB(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Math.round(Number(match[1]) / 1024) : NaN;
}
