/**
 * `keyward key list --account A --json` as an operator runs it: a fresh process each time, on a real
 * SQLite database holding an account and three keys. Measures, for each way of running the CLI in the
 * same run (runs interleaved, so a busy moment of the machine falls on every variant alike):
 *   before  the tree at BENCH_BASE (default 9bee25b: bin/keyward.js registering tsx, every command's
 *           code imported up front), extracted with `git archive`, sharing this node_modules;
 *   tsx     this tree's sources through tsx (the lazy CLI, not compiled);
 *   dist    this tree's bin/keyward.js, which runs the compiled dist/ (`npm run build` first).
 * Per run: wall time (spawn to exit), CPU time (user + system, from /usr/bin/time: steadier than wall
 * time on a shared machine) and peak RSS. Then, once per variant, the files the command loaded.
 *
 *   npm run bench:cli
 *   BENCH_RUNS=40 BENCH_VARIANTS=before,dist npm run bench:cli
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const BASE = process.env.BENCH_BASE ?? '9bee25b';
const VARIANTS = (process.env.BENCH_VARIANTS ?? 'before,tsx,dist').split(',');

interface Variant {
  name: string;
  cwd: string;
  /** node's arguments before the CLI's own. */
  entry: string[];
  env: NodeJS.ProcessEnv;
  accountId?: string;
}

interface Sample {
  wallMs: number;
  cpuMs: number;
  rssMiB: number;
}

const work = mkdtempSync(join(tmpdir(), 'keyward-cli-bench-'));

/** The base commit's files, with this tree's node_modules (the same packages; only our code differs). */
function baseTree(): string {
  const dir = join(work, 'base');
  mkdirSync(dir);
  execFileSync('sh', ['-c', `git -C "${ROOT}" archive ${BASE} | tar -x -C "${dir}"`]);
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

function makeVariant(name: string): Variant {
  const database = join(work, `${name}.sqlite`);
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('KEYWARD_') && key !== 'NODE_OPTIONS') env[key] = value;
  Object.assign(env, { KEYWARD_DATABASE_URL: `sqlite:${database}`, KEYWARD_MASTER_KEY: randomBytes(32).toString('base64') });
  if (name === 'before') return { name, cwd: baseTree(), entry: ['bin/keyward.js'], env };
  if (name === 'dist') {
    if (!existsSync(join(ROOT, 'dist/cli/main.js'))) throw new Error('dist/ is missing: run `npm run build` (npm run bench:cli does)');
    return { name, cwd: ROOT, entry: ['bin/keyward.js'], env };
  }
  if (name === 'tsx') {
    // What bin/keyward.js does, with the TypeScript sources in place of dist/.
    const run = `const { main } = await import('./src/cli/main.ts'); const code = await main(process.argv.slice(1)); if (code >= 0) process.exitCode = code;`;
    return { name, cwd: ROOT, entry: ['--import', 'tsx', '--input-type=module', '-e', run], env };
  }
  throw new Error(`unknown variant "${name}" (before, tsx, dist)`);
}

function cli(variant: Variant, args: string[], nodeFlags: string[] = []): Record<string, unknown> {
  const out = execFileSync(process.execPath, [...nodeFlags, ...variant.entry, ...args, '--json'], { cwd: variant.cwd, env: variant.env, encoding: 'utf8' });
  return JSON.parse(out) as Record<string, unknown>;
}

/** An account and three keys, made by the variant's own CLI (each variant has its own database). */
function seed(variant: Variant) {
  const account = cli(variant, ['account', 'create', '--name', 'Bench', '--email', `bench-${variant.name}@example.com`]);
  variant.accountId = account.accountId as string;
  for (const label of ['production', 'staging', 'ci']) cli(variant, ['key', 'create', '--account', variant.accountId, '--label', label]);
  const listed = cli(variant, ['key', 'list', '--account', variant.accountId]);
  if ((listed.keys as unknown[]).length !== 3) throw new Error(`${variant.name}: key list did not list the three keys`);
}

/** One `key list` under /usr/bin/time: wall time measured here, CPU and peak RSS from the child's rusage. */
function sample(variant: Variant): Promise<Sample> {
  const timing = join(work, `${variant.name}.time`);
  const args = ['-f', '%U %S %M', '-o', timing, process.execPath, ...variant.entry, 'key', 'list', '--account', variant.accountId!, '--json'];
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn('/usr/bin/time', args, { cwd: variant.cwd, env: variant.env, stdio: ['ignore', 'ignore', 'inherit'] });
    child.once('error', reject);
    child.once('exit', (code) => {
      const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
      if (code !== 0) return reject(new Error(`${variant.name}: key list exited with ${code}`));
      const [user, system, rssKiB] = readFileSync(timing, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
      resolve({ wallMs, cpuMs: (user! + system!) * 1000, rssMiB: rssKiB! / 1024 });
    });
  });
}

/** Which files `key list` loads: ESM through a load hook, CommonJS from require's cache at exit. */
function loadedFiles(variant: Variant) {
  const list = join(work, `${variant.name}.modules`);
  const probe = new URL('../test/helpers/module-probe.mjs', import.meta.url).href;
  execFileSync(process.execPath, ['--import', probe, ...variant.entry, 'key', 'list', '--account', variant.accountId!, '--json'], {
    cwd: variant.cwd,
    env: { ...variant.env, CLI_MODULE_PROBE_OUT: list },
    stdio: 'ignore',
  });
  const files = [
    ...new Set(
      readFileSync(list, 'utf8')
        .split('\n')
        .filter((line) => line.startsWith('file:')),
    ),
  ].map((u) => fileURLToPath(u));
  const ours = files.filter((f) => !f.includes('/node_modules/'));
  const packages = new Map<string, number>();
  for (const file of files) {
    const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file.slice(file.lastIndexOf('/node_modules/')));
    if (match) packages.set(match[1]!, (packages.get(match[1]!) ?? 0) + 1);
  }
  return { ours: ours.length, packageFiles: files.length - ours.length, packages: [...packages.keys()].sort() };
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
};

async function main() {
  const variants = VARIANTS.map(makeVariant);
  for (const variant of variants) seed(variant);
  // Two unmeasured rounds: the page cache holds every file before the first measured one.
  for (let round = 0; round < 2; round++) for (const variant of variants) await sample(variant);
  const samples = new Map<string, Sample[]>(variants.map((v) => [v.name, []]));
  for (let round = 0; round < RUNS; round++) for (const variant of variants) samples.get(variant.name)!.push(await sample(variant));

  console.log(`keyward key list --account A --json, ${RUNS} runs each, interleaved (Node ${process.version}, base ${BASE})\n`);
  console.log('| variant | wall p50 | wall p90 | CPU p50 | CPU p90 | peak RSS p50 | project files | package files | packages |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const variant of variants) {
    const s = samples.get(variant.name)!;
    const wall = s.map((x) => x.wallMs);
    const cpu = s.map((x) => x.cpuMs);
    const rss = s.map((x) => x.rssMiB);
    const files = loadedFiles(variant);
    console.log(
      `| ${variant.name} | ${quantile(wall, 0.5).toFixed(0)} ms | ${quantile(wall, 0.9).toFixed(0)} ms | ${quantile(cpu, 0.5).toFixed(0)} ms | ${quantile(cpu, 0.9).toFixed(0)} ms | ${quantile(rss, 0.5).toFixed(1)} MiB | ${files.ours} | ${files.packageFiles} | ${files.packages.length} |`,
    );
    console.log(`<!-- ${variant.name} packages: ${files.packages.join(', ')} -->`);
  }
}

try {
  await main();
} finally {
  rmSync(work, { recursive: true, force: true });
}
