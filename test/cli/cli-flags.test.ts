/**
 * The CLI's flags are read strictly (CONTRACT 4), as real processes: every command of the command
 * table refuses a flag it does not know (exit 2, one line naming it) before it touches anything, a
 * missing or malformed value likewise, and prints its usage for `--help` (exit 0) on an otherwise
 * well-formed line; `serve --port`/`--host` win over KEYWARD_PORT/KEYWARD_HOST, and
 * a port in use is one line naming the port and what to change.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { commandTable } from '../../src/cli/main.js';
import { cliEnv, newMasterKey, runCli, startServe } from '../helpers/cli-process.js';

const SLOW = 180_000;

/** Runs each command line, a few at a time (the machine's cores are shared), in order. */
async function runAll(env: NodeJS.ProcessEnv, lines: string[][], atOnce = 4) {
  const runs: Awaited<ReturnType<typeof runCli>>[] = [];
  for (let i = 0; i < lines.length; i += atOnce) runs.push(...(await Promise.all(lines.slice(i, i + atOnce).map((args) => runCli(env, args)))));
  return runs;
}

/** A listener on a free port of 127.0.0.1, held until closed: a port that is in use. */
async function holdPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as { port: number }).port, server };
}

const release = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

/** A port that was free a moment ago. */
async function freePort(): Promise<number> {
  const { port, server } = await holdPort();
  await release(server);
  return port;
}

describe('the CLI refuses what it does not understand', () => {
  const dir = mkdtempSync(join(tmpdir(), 'keyward-flags-'));
  const database = join(dir, 'keyward.db');
  const env = cliEnv({ KEYWARD_DATABASE_URL: `sqlite:${database}`, KEYWARD_MASTER_KEY: newMasterKey() });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Exit 2 and exactly one line on stderr, which names `what`; nothing on stdout. */
  const expectUsageError = (run: { code: number; stdout: string; stderr: string }, what: string, label: string) => {
    expect(run.code, `${label}: ${run.stderr}`).toBe(2);
    expect(run.stdout, label).toBe('');
    expect(run.stderr, label).toMatch(/^keyward: [^\n]+\n$/);
    expect(run.stderr, label).toContain(what);
  };

  it('every command of the table refuses an unknown flag, before opening the database', { timeout: SLOW }, async () => {
    const names = Object.keys(await commandTable());
    expect(names).toEqual(expect.arrayContaining(['serve', 'migrate', 'account create', 'user set-password', 'key list', 'master-key rotate']));
    const runs = await runAll(
      env,
      names.map((name) => [...name.split(' '), '--no-such-flag', 'x']),
    );
    for (const [i, run] of runs.entries()) expectUsageError(run, '--no-such-flag', names[i]!);
    // Refused before anything was done: not even the database was made.
    expect(existsSync(database)).toBe(false);
  });

  it('every command of the table prints its usage for --help, exit 0, before opening the database; a group lists its commands', { timeout: SLOW }, async () => {
    const table = await commandTable();
    const names = Object.keys(table);
    // After the command's name, or among its flags.
    const runs = await runAll(
      env,
      names.map((name, i) => (i % 2 === 0 ? [...name.split(' '), '--help'] : [...name.split(' '), '--json', '--help'])),
    );
    for (const [i, run] of runs.entries()) {
      const { usage, noJson } = table[names[i]!]!;
      expect(run.code, `${names[i]}: ${run.stderr}`).toBe(0);
      expect(run.stderr, names[i]).toBe('');
      expect(run.stdout, names[i]).toBe(`Usage: keyward ${usage}${noJson ? '' : ' [--json]'}\n`);
    }
    expect(existsSync(database)).toBe(false);
    const [server, help] = await runAll(env, [
      ['server', '--help'],
      ['key', 'help'],
    ]);
    expect(server!.code).toBe(0);
    const serverLines = Object.entries(table).filter(([name]) => name.startsWith('server '));
    expect(server!.stdout).toBe(`Usage:\n${serverLines.map(([, c]) => `  keyward ${c.usage} [--json]\n`).join('')}`);
    expect(help!.code).toBe(0);
    expect(help!.stdout).toContain('keyward key list --account A');
    expect(help!.stdout).not.toContain('keyward server');
  });

  it('a short flag, a stray word, a missing value, a value to --json, a flag given twice', { timeout: SLOW }, async () => {
    const cases: [args: string[], names: string][] = [
      [['key', 'list', '-a', 'acct_1'], '-a'],
      [['key', 'list', '--account', 'acct_1', 'extra'], 'unexpected argument at position 3'],
      // A value typed without its flag is not repeated: it may be a password.
      [['user', 'set-password', '--user', 'usr_1', 'hunter2-hunter2'], 'unexpected argument at position 3'],
      [['account', 'create', '--name', '--email', 'ops@acme.test'], '--name needs a value'],
      [['account', 'create', '--email', 'ops@acme.test'], '--name is required'],
      [['key', 'list', '--account', 'acct_1', '--json=yes'], '--json takes no value'],
      [['key', 'list', '--account', 'acct_1', '--account', 'acct_2'], '--account is given twice'],
      // Help is printed only for an otherwise well-formed line.
      [['key', 'list', '--no-such-flag', '--help'], '--no-such-flag'],
      [['key', 'list', '--help=yes'], '--help takes no value'],
      [['migrate', '--force'], '--force'],
      [['serve', '--port', 'http'], '--port must be a whole number from 0 to 65535, got "http"'],
      [['serve', '--port', '70000'], '--port must be a whole number'],
      [['serve', '--port'], '--port needs a value'],
      [['serve', '--host='], '--host needs a value'],
      [['serve', '--json'], '--json'],
    ];
    const runs = await runAll(
      env,
      cases.map(([args]) => args),
    );
    for (const [i, run] of runs.entries()) expectUsageError(run, cases[i]![1], cases[i]![0].join(' '));
    expect(runs.map((run) => run.stderr).join('')).not.toMatch(/extra|hunter2/);
    expect(existsSync(database)).toBe(false);
  });
});

describe('keyward serve --port and --host', () => {
  const dir = mkdtempSync(join(tmpdir(), 'keyward-serve-flags-'));
  const env = (settings: Record<string, string> = {}) =>
    cliEnv({ KEYWARD_DATABASE_URL: `sqlite:${join(dir, 'keyward.db')}`, KEYWARD_MASTER_KEY: newMasterKey(), KEYWARD_LOG_LEVEL: 'info', ...settings });
  const masterKey = newMasterKey();
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('listen where the flags say, over KEYWARD_PORT and KEYWARD_HOST, and the public URL follows the port', { timeout: SLOW }, async () => {
    // The variables name a port that is taken and an address that is not this machine's: only the flags can work.
    const taken = await holdPort();
    const port = await freePort();
    try {
      const serve = await startServe(env({ KEYWARD_MASTER_KEY: masterKey, KEYWARD_PORT: String(taken.port), KEYWARD_HOST: '192.0.2.1' }), 60_000, [
        '--port',
        String(port),
        '--host',
        '127.0.0.1',
      ]);
      try {
        expect(serve.address).toBe(`http://127.0.0.1:${port}`);
        const listening = serve.lines.map((line) => JSON.parse(line) as { msg?: string; publicUrl?: string }).find((l) => l.msg === 'Keyward is listening');
        expect(listening?.publicUrl).toBe(`http://localhost:${port}`);
        const health = await fetch(`http://127.0.0.1:${port}/healthz`);
        expect(health.status).toBe(200);
        // The public URL is what the service builds end users' links on: a hosted form's page answers there.
        const signIn = await fetch(`http://localhost:${port}/dashboard/sign-in`);
        expect(signIn.status).toBe(200);
      } finally {
        expect(await serve.stop()).toEqual({ code: 0, signal: null });
      }
    } finally {
      await release(taken.server);
    }
  });

  it('a port in use is one line naming the port and what to change, exit 1', { timeout: SLOW }, async () => {
    const taken = await holdPort();
    try {
      for (const [settings, args] of [
        [{ KEYWARD_PORT: String(taken.port) }, []],
        [{}, ['--port', String(taken.port)]],
      ] as [Record<string, string>, string[]][]) {
        const run = await runCli(env({ KEYWARD_MASTER_KEY: masterKey, ...settings }), ['serve', ...args]);
        expect(run.code, run.stderr).toBe(1);
        expect(run.stderr).toBe(`keyward: port ${taken.port} on 127.0.0.1 is in use; set KEYWARD_PORT or --port\n`);
      }
    } finally {
      await release(taken.server);
    }
  });
});
